"""Read a run directory into memory for the reports.

Why a reader of its own: the exam appends records and may write the same id again after a resume, and a
killed run may lack its final files (outcomes.jsonl, a finished run.json). The report must still be built
from whatever is there, so this module keeps the last record per id, skips a torn last line, and derives
unit outcomes from the verdicts when outcomes.jsonl is missing.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from examiner.errors import UserError
from examiner.core.records import (
    AnswerRecord,
    ClusterRound,
    QuestionRecord,
    RunInfo,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
    record_key,
)
from examiner.core.jsonl import read_models
from examiner.llm.ledger import read_ledger

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

COVERING = ("correct", "incorrect")
"""Verdict types that cover a unit; `unrelated` and `unscored` leave it in the pool."""


@dataclass
class RunData:
    """Everything a report needs from one run directory, deduplicated."""

    path: Path
    info: RunInfo
    config: dict[str, Any]
    units: dict[str, UnitRecord]
    clusters: dict[str, list[ClusterRound]]
    """Per target, the rounds' clusterings in round order."""
    questions: dict[str, QuestionRecord]
    answers: dict[str, AnswerRecord]
    verdicts: dict[str, VerdictRecord]
    outcomes: dict[str, dict[str, UnitOutcome]]
    """Per target, unit id -> final outcome (every unit of the corpus present; missing ones uncovered)."""
    ledger: list[dict[str, Any]]
    outcomes_derived: bool = False
    """True when outcomes.jsonl was absent and outcomes were rebuilt from the verdicts."""
    unreadable_lines: dict[str, int] = field(default_factory=dict)

    @property
    def targets(self) -> list[str]:
        seen = list(self.info.targets)
        for target in self.outcomes:
            if target not in seen:
                seen.append(target)
        return seen

    @property
    def n_units(self) -> int:
        return len(self.units) or self.info.units

    def cluster_of(self) -> dict[str, tuple[int, str]]:
        """Cluster id -> (round, target) over all clusterings."""
        index: dict[str, tuple[int, str]] = {}
        for target, rounds in self.clusters.items():
            for rnd in rounds:
                for cluster in rnd.clusters:
                    index.setdefault(cluster.id, (rnd.round, target))
        return index


def _read_clusters(run_dir: Path) -> dict[str, list[ClusterRound]]:
    """clusters/<target>/round-N.json, also accepting the flat clusters/round-N.json layout."""
    result: dict[str, dict[int, ClusterRound]] = defaultdict(dict)
    root = run_dir / "clusters"
    if not root.is_dir():
        return {}
    for file in sorted(root.rglob("round-*.json")):
        try:
            rnd = ClusterRound.model_validate_json(file.read_text(encoding="utf-8"))
        except (ValidationError, ValueError, OSError) as exc:
            log.warning("skipping unreadable %s: %s", file, exc)
            continue
        result[rnd.target][rnd.round] = rnd
    return {t: [rounds[r] for r in sorted(rounds)] for t, rounds in result.items()}


def load_run(run_dir: str | Path) -> RunData:
    """Read a run directory; UserError (one line for the CLI) when it is not one."""
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"run directory not found: {run_dir}")
    info_file = path / "run.json"
    if not info_file.is_file():
        raise UserError(f"not a run directory (no run.json): {run_dir}")
    try:
        info = RunInfo.model_validate_json(info_file.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        raise UserError(f"invalid run.json in {run_dir}: {first}") from None
    config: dict[str, Any] = {}
    if (path / "config.yaml").is_file():
        try:
            config = yaml.safe_load((path / "config.yaml").read_text(encoding="utf-8")) or {}
        except yaml.YAMLError:
            log.warning("config.yaml of %s is not valid YAML", run_dir)
    bad: dict[str, int] = {}
    units = read_models(path / "units.jsonl", UnitRecord, record_key, bad)
    questions = read_models(path / "questions.jsonl", QuestionRecord, record_key, bad)
    answers = read_models(path / "answers.jsonl", AnswerRecord, record_key, bad)
    verdicts = read_models(path / "verdicts.jsonl", VerdictRecord, record_key, bad)
    raw_outcomes = read_models(path / "outcomes.jsonl", UnitOutcome, record_key, bad)
    clusters = _read_clusters(path)
    ledger = read_ledger(path / "ledger.jsonl")
    run = RunData(path, info, config, units, clusters, questions, answers, verdicts, {}, ledger,
                  unreadable_lines=bad)
    if raw_outcomes:
        for outcome in raw_outcomes.values():
            run.outcomes.setdefault(outcome.target, {})[outcome.unit_id] = outcome
    else:
        run.outcomes = derive_outcomes(run)
        run.outcomes_derived = bool(run.verdicts)
    for target in info.targets:
        table = run.outcomes.setdefault(target, {})
        for unit_id in units:
            table.setdefault(unit_id, UnitOutcome(unit_id=unit_id, target=target, status="uncovered"))
    return run


def derive_outcomes(run: RunData) -> dict[str, dict[str, UnitOutcome]]:
    """Outcomes from verdicts for a run that stopped before writing outcomes.jsonl.

    A unit is covered by its earliest correct/incorrect verdict; times targeted counts the questions
    naming it. `unanswered` cannot be told apart from `uncovered` without the run's settings, so every
    uncovered unit is reported as uncovered.
    """
    out: dict[str, dict[str, UnitOutcome]] = {}
    member_cluster: dict[tuple[str, int, str], str] = {}
    for target, rounds in run.clusters.items():
        for rnd in rounds:
            for cluster in rnd.clusters:
                for member in cluster.members:
                    member_cluster[(target, rnd.round, member)] = cluster.id
    covering: dict[tuple[str, str], VerdictRecord] = {}
    for verdict in sorted(run.verdicts.values(), key=lambda v: (v.round, v.id)):
        if verdict.type in COVERING:
            covering.setdefault((verdict.target, verdict.unit_id), verdict)
    targeted: dict[tuple[str, str], list[QuestionRecord]] = defaultdict(list)
    for question in run.questions.values():
        for unit_id in question.targets:
            targeted[(question.target, unit_id)].append(question)
    for target in run.info.targets:
        table = out.setdefault(target, {})
        for unit_id in run.units:
            asked = targeted.get((target, unit_id), [])
            verdict = covering.get((target, unit_id))
            if verdict is not None:
                question = run.questions.get(verdict.question_id)
                before = [q for q in asked if q.round < verdict.round]
                table[unit_id] = UnitOutcome(
                    unit_id=unit_id, target=target, status=verdict.type,  # type: ignore[arg-type]
                    verdict_id=verdict.id, times_targeted=len(asked), times_targeted_uncovered=len(before),
                    covered_round=verdict.round,
                    cluster_id=question.cluster_id if question else
                    member_cluster.get((target, verdict.round, unit_id)),
                    qtype=question.qtype if question else None,
                )
            else:
                last = max((q.round for q in asked), default=None)
                table[unit_id] = UnitOutcome(
                    unit_id=unit_id, target=target, status="uncovered", times_targeted=len(asked),
                    times_targeted_uncovered=len(asked),
                    cluster_id=member_cluster.get((target, last, unit_id)) if last is not None else None,
                )
    return out
