"""The exam's figures with people's overrides applied, and the judge's agreement with those people.

Why here: the report shows accuracy and coverage twice, as the judge gave them and with the overrides a
reviewer made in `examiner view` (overrides.jsonl; verdicts.jsonl never changes). The recompute builds a
copy of the run whose overridden verdicts carry the person's label and re-derives each touched unit's
outcome, then reuses the report's own scoring (target_scores), so both rows are computed the same way.
The same overrides are human labels for the exam's judge: `examiner meta --exam` and `examiner
judge-stats --human-from-run` compare the judge's original verdict with them (human_agreement).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace
from typing import Any

from examiner.core.labels import COVERING
from examiner.core.overrides import OverrideRecord
from examiner.core.records import UnitOutcome, VerdictRecord
from examiner.core.rundir import OVERRIDES
from examiner.reporting.run_reader import RunData
from examiner.reporting.summary import target_scores
from examiner.stats.correlation import cohen_kappa

LABELS = ("correct", "incorrect", "abstained", "unrelated")
"""The labels a person can give, in the order confusion tables list them."""


def _overridden(verdict: VerdictRecord, row: OverrideRecord) -> VerdictRecord:
    reason = f"override by {row.who} at {row.at}: {row.reason}"
    return verdict.model_copy(update={"verdict": row.verdict, "reason": reason})


def verdicts_with_overrides(run: RunData) -> dict[str, VerdictRecord]:
    """The run's verdicts by id, those a person overrode carrying the person's label and reason."""
    out = dict(run.verdicts)
    for verdict_id, verdict in run.verdicts.items():
        row = run.overrides.get((verdict.question_id, verdict.unit_id))
        if row is not None:
            out[verdict_id] = _overridden(verdict, row)
    return out


def _recomputed(outcome: UnitOutcome, verdicts: list[VerdictRecord], run: RunData) -> UnitOutcome:
    """A unit's outcome when some of its verdicts changed: covered by its earliest covering verdict
    (as the exam covers a unit), otherwise uncovered (or still unanswered)."""
    covering = [v for v in verdicts if v.verdict in COVERING]
    if not covering:
        status = "uncovered" if outcome.status in COVERING else outcome.status
        return outcome.model_copy(update={"status": status, "verdict_id": None, "covered_round": None})
    first = min(covering, key=lambda v: (v.round, v.id))
    question = run.questions.get(first.question_id)
    update: dict[str, Any] = {"status": first.verdict, "verdict_id": first.id, "covered_round": first.round}
    if question is not None:
        update.update(cluster_id=question.cluster_id, qtype=question.qtype)
    return outcome.model_copy(update=update)


def apply_overrides(run: RunData) -> RunData:
    """A copy of the run with the overrides in force: verdicts relabelled, touched units' outcomes
    re-derived; the original run is not changed."""
    verdicts = verdicts_with_overrides(run)
    by_unit: dict[tuple[str, str], list[VerdictRecord]] = defaultdict(list)
    touched: set[tuple[str, str]] = set()
    for verdict_id, verdict in verdicts.items():
        by_unit[(verdict.target, verdict.unit_id)].append(verdict)
        if verdict is not run.verdicts[verdict_id]:
            touched.add((verdict.target, verdict.unit_id))
    outcomes = {target: {unit_id: (_recomputed(o, by_unit[(target, unit_id)], run) if (target, unit_id) in touched
                                   else o) for unit_id, o in table.items()}
                for target, table in run.outcomes.items()}
    return replace(run, verdicts=verdicts, outcomes=outcomes)


def override_counts(run: RunData) -> dict[str, Any]:
    """How many verdicts carry an override, how many of those change the label, and per target."""
    verdict_of = {(v.question_id, v.unit_id): v for v in run.verdicts.values()}
    rows = [(verdict_of[key], row) for key, row in run.overrides.items() if key in verdict_of]
    per_target = Counter(v.target for v, _ in rows)
    return {"overrides": len(rows), "changed": sum(v.verdict != row.verdict for v, row in rows),
            "unmatched": len(run.overrides) - len(rows), "per_target": dict(per_target)}


def human_agreement(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """The judge's verdicts against people's labels, given as (judge, human) pairs: agreement, Cohen's
    kappa and the confusion table (rows: the judge, columns: the person). The judge's `unscored`
    verdicts are counted apart (no label to compare)."""
    scored = [(j, h) for j, h in pairs if j != "unscored"]
    labels = [label for label in LABELS if any(label in pair for pair in scored)]
    confusion = {j: {h: sum(1 for a, b in scored if (a, b) == (j, h)) for h in LABELS} for j in LABELS}
    agreed = sum(a == b for a, b in scored)
    kappa = cohen_kappa([a for a, _ in scored], [b for _, b in scored]) if scored else None
    return {"items": len(pairs), "compared": len(scored), "judge_unscored": len(pairs) - len(scored),
            "agreed": agreed, "agreement": agreed / len(scored) if scored else None,
            "cohen_kappa": kappa, "labels": labels, "confusion": confusion}


def judge_vs_people(run: RunData) -> dict[str, Any]:
    """human_agreement of the exam's judge (original verdicts) with the overrides of this run; with a
    judge panel, also each member's own verdicts under `members`."""
    verdict_of = {(v.question_id, v.unit_id): v for v in run.verdicts.values()}
    judged = [(verdict_of[key], row.verdict) for key, row in run.overrides.items() if key in verdict_of]
    members = sorted({name for v, _ in judged for name in v.members})
    return {**human_agreement([(v.verdict, new) for v, new in judged]),
            "members": {name: human_agreement([(v.members[name].verdict, new) for v, new in judged if name in v.members])
                        for name in members}}




def overrides_summary(run: RunData, seed: int = 0) -> dict[str, Any] | None:
    """The report's "with overrides" figures: per target accuracy and coverage as the judge gave them and
    with the overrides applied (same intervals), the override counts, and the judge's agreement with the
    people; None when the run has no override."""
    if not run.overrides:
        return None
    counts = override_counts(run)
    changed = apply_overrides(run)
    targets = {}
    for target in run.targets:
        judge, people = target_scores(run, target, seed), target_scores(changed, target, seed)
        targets[target] = {"overrides": counts["per_target"].get(target, 0),
                           **{f"{key}_judge": judge[key] for key in ("accuracy", "coverage", "counts")},
                           **{f"{key}_with_overrides": people[key] for key in ("accuracy", "coverage", "counts")}}
    return {"file": OVERRIDES, **counts, "targets": targets, "judge_vs_people": judge_vs_people(run)}


__all__ = ["LABELS", "apply_overrides", "human_agreement", "judge_vs_people", "override_counts", "overrides_summary",
           "verdicts_with_overrides"]
