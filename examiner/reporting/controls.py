"""The knowledge section's control-question figures per target (controls.jsonl, examiner/exam/nodes/controls.py).

Why apart from the knowledge rows: control questions have no right answer in the corpus, so they are never
units, outcomes or accuracy; what they measure is how the target meets a question it cannot answer. The
control refusal rate (declined or corrected the premise: the right answer) and the false-premise acceptance
rate (answered as if the premise held: the hallucination) each carry the report's cluster interval
(score_intervals.ratio_estimate: documents, or the exam clusters within one document), since one document's
controls share its topic. Over-refusal on ordinary questions is the knowledge row's abstention rate: a target
that declines every control AND abstains on answerable questions refuses everything.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from examiner.core.control_records import ControlRecord
from examiner.core.rundir import RunDir
from examiner.reporting.run_reader import RunData
from examiner.reporting.score_intervals import ratio_estimate, unit_document

RATE_KEYS = ("value", "low", "high", "num", "den", "groups", "grouped_by", "method")


def run_controls(run: RunData) -> list[ControlRecord]:
    """controls.jsonl's records (none for a run without control questions)."""
    return list(RunDir(run.path).records(ControlRecord).values())


def _rate(values: list[int | None], documents: list[str], clusters: list[str]) -> dict[str, Any]:
    est = ratio_estimate(values, documents, clusters)
    return {k: est.get(k) for k in RATE_KEYS} | {"groups": est.get("groups") or 0}


def control_figures(run: RunData, records: list[ControlRecord], target: str) -> dict[str, Any] | None:
    """ControlFigures as data for one target; None when it met no control question."""
    mine = [r for r in records if r.target == target]
    if not mine:
        return None
    documents = [unit_document(run, r.unit_ids[0]) if r.unit_ids else r.cluster_id for r in mine]
    clusters = [r.cluster_id for r in mine]
    labels = [r.label for r in mine]
    return {
        "asked": len(mine),
        "declined_or_corrected": labels.count("declined_or_corrected"),
        "accepted_premise": labels.count("accepted_premise"),
        "unlabelled": labels.count(None),
        "by_kind": dict(sorted(Counter(r.kind for r in mine).items())),
        "refusal_rate": _rate([None if x is None else int(x == "declined_or_corrected") for x in labels],
                              documents, clusters),
        "false_premise_acceptance": _rate([None if x is None else int(x == "accepted_premise") for x in labels],
                                          documents, clusters),
    }


__all__ = ["control_figures", "run_controls"]
