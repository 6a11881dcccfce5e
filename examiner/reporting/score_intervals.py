"""The exam report's accuracy and coverage intervals, from examiner.stats.intervals.accuracy_interval.

Why here: every interval the exam report prints (per target in report.md, report.html, the terminal and
`compare`) comes from one function, the same method at every size, flagged as a small sample below
SMALL_SAMPLE_GROUPS independent groups. The groups are a unit's source document (the document
of its first source) with its exam cluster inside: the documents are the independent stage, or the exam
clusters when every unit comes from one document (examiner.stats.clusters.grouping). With 8 units in 2
clusters whose accuracies agree a percentile bootstrap over clusters printed 0.750 [0.750, 0.750]; here the
Wilson interval with design effect gives a width the data can bear.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from examiner.core.labels import COVERING
from examiner.reporting.run_reader import RunData
from examiner.stats.clusters import grouping
from examiner.stats.intervals import SMALL_SAMPLE_GROUPS, accuracy_interval

__all__ = ["SMALL_SAMPLE_GROUPS", "ratio_estimate", "small_sample_note", "small_sample_notes", "target_estimates",
           "unit_document"]

NO_INTERVAL = {"low": None, "high": None, "groups": 0, "grouped_by": None, "method": None, "small_sample": None}


def unit_document(run: RunData, unit_id: str) -> str:
    """The document of the unit's first source (a unit without a record is a document of its own), as
    examiner.reporting.paired reads it."""
    record = run.units.get(unit_id)
    return record.sources[0].document if record is not None and record.sources else f"unit:{unit_id}"


def _finite(x: float) -> float | None:
    return None if x != x else float(x)


def ratio_estimate(values: Sequence[int | None], documents: Sequence[Hashable], clusters: Sequence[Hashable]
                   ) -> dict[str, Any]:
    """Share of 1s among the units whose value is not None, with its 95 % interval (accuracy_interval over
    those units' documents and clusters), clipped to [0, 1]. Keeps the fields the report had (value, low,
    high, num, den, clusters: the exam clusters among those units) and adds how the interval was made:
    groups and grouped_by (the independent groups: documents, or clusters when there is one document),
    method, and small_sample (fewer than SMALL_SAMPLE_GROUPS groups)."""
    kept = [i for i, v in enumerate(values) if v is not None]
    num = sum(int(values[i] or 0) for i in kept)
    den = len(kept)
    row: dict[str, Any] = {"value": num / den if den else None, "num": num, "den": den,
                           "clusters": len({clusters[i] for i in kept})}
    if not den:
        return {**row, **NO_INTERVAL}
    docs, clus = [documents[i] for i in kept], [clusters[i] for i in kept]
    est = accuracy_interval([values[i] for i in kept], docs, clus)
    low, high = _finite(est.low), _finite(est.high)
    return {**row, "low": None if low is None else min(max(low, 0.0), 1.0),
            "high": None if high is None else min(max(high, 0.0), 1.0), "groups": est.n_groups,
            "grouped_by": grouping(docs, clus).top_stage, "method": est.method, "small_sample": est.small_sample}


def small_sample_note(figure: Any) -> str | None:
    """'small sample (k documents): <method>' for an interval made by the small-sample method (a report
    model's Estimate or its dict), else None."""
    def get(name: str) -> Any:
        return figure.get(name) if isinstance(figure, dict) else getattr(figure, name, None)

    if not get("small_sample"):
        return None
    return f"small sample ({get('groups')} {get('grouped_by')}): {get('method')}"


def small_sample_notes(targets: Iterable[tuple[str, Any]]) -> list[str]:
    """One line per target whose accuracy or coverage interval is a small-sample one: which figures, how
    many groups, and the method (below SMALL_SAMPLE_GROUPS groups the t reference has few degrees of freedom)."""
    lines = []
    for name, target in targets:
        notes = {which: small_sample_note(getattr(target, which)) for which in ("accuracy", "coverage")}
        said = [f"{which} {note}" for which, note in notes.items() if note]
        if said:
            lines.append(f"{name}: " + "; ".join(said) + f" (fewer than {SMALL_SAMPLE_GROUPS} independent groups).")
    return lines


def target_estimates(run: RunData, outcomes: Sequence[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Accuracy (correct among covered units) and coverage (covered among all) of one target's unit
    outcomes, each a ratio_estimate over the units' documents and exam clusters (a unit never clustered
    is a cluster of its own)."""
    documents = [unit_document(run, o.unit_id) for o in outcomes]
    clusters = [o.cluster_id or f"unit:{o.unit_id}" for o in outcomes]
    correct = [(1 if o.status == "correct" else 0) if o.status in COVERING else None for o in outcomes]
    covered = [1 if o.status in COVERING else 0 for o in outcomes]
    return (ratio_estimate(correct, documents, clusters), ratio_estimate(covered, documents, clusters))
