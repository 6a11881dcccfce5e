"""Read a run directory into memory for the reports.

Why a reader of its own: the exam appends records and may write the same id again after a resume, and a
killed run may lack its final files (outcomes.jsonl, a finished run.json). The report must still be built
from whatever is there, so this module reads the files through examiner.core.rundir (last record per id,
a torn last line counted, damage elsewhere a one-line error) and derives unit outcomes from the verdicts
when outcomes.jsonl is missing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examiner.errors import UserError
from examiner.core.records import (
    AnswerRecord,
    ClusterRound,
    QuestionRecord,
    RunInfo,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
)
from examiner.core.rundir import RunDir

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
    """Per file name, the torn last lines met while reading (a killed writer's last record)."""
    passages: dict[str, dict[str, Any]] = field(default_factory=dict)
    """passages.jsonl by id: the passages as the exam read them (empty for runs that predate it)."""

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


def load_run(run_dir: str | Path) -> RunData:
    """Read a run directory; UserError (one line for the CLI) when it is not one or a file is damaged."""
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"run directory not found: {run_dir}")
    files = RunDir(path)
    info = files.read_info()
    config = files.read_config()
    units = files.records(UnitRecord)
    questions = files.records(QuestionRecord)
    answers = files.records(AnswerRecord)
    verdicts = files.records(VerdictRecord)
    raw_outcomes = files.records(UnitOutcome)
    clusters = files.read_clusters()
    ledger = files.read_ledger()
    passages = files.read_passages()
    run = RunData(path, info, config, units, clusters, questions, answers, verdicts, {}, ledger,
                  unreadable_lines=files.torn, passages=passages)
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
