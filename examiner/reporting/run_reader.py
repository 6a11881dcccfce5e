"""Read a run directory into memory for the reports.

Why a reader of its own: the exam appends records and may write the same id again after a resume, and a
killed run may lack its final files (outcomes.jsonl, a finished run.json). The report must still be built
from whatever is there, so this module reads the run with examiner.core.rundir.RunDir.read (last record per id,
a torn last line counted, damage elsewhere a one-line error) and derives unit outcomes from the verdicts
when outcomes.jsonl is missing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, fields
from pathlib import Path

from examiner.core.labels import COVERING
from examiner.core.records import QuestionRecord, UnitOutcome, VerdictRecord
from examiner.core.rundir import RunDir, RunRecords


@dataclass
class RunData(RunRecords):
    """Everything a report needs from one run directory: its records, and every unit's outcome per target."""

    outcomes: dict[str, dict[str, UnitOutcome]] = field(default_factory=dict)
    """Per target, unit id -> final outcome (every unit of the corpus present; missing ones uncovered)."""
    outcomes_derived: bool = False
    """True when outcomes.jsonl was absent and outcomes were rebuilt from the verdicts."""

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
    records = RunDir(run_dir).read()
    run = RunData(**{f.name: getattr(records, f.name) for f in fields(RunRecords)})
    if records.outcome_records:
        for outcome in records.outcome_records.values():
            run.outcomes.setdefault(outcome.target, {})[outcome.unit_id] = outcome
    else:
        run.outcomes = derive_outcomes(run)
        run.outcomes_derived = bool(run.verdicts)
    for target in run.info.targets:
        table = run.outcomes.setdefault(target, {})
        for unit_id in run.units:
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
        if verdict.verdict in COVERING:
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
                    unit_id=unit_id, target=target, status=verdict.verdict,  # type: ignore[arg-type]
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
