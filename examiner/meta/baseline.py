"""Baseline ranking of evaluators from gold labels: accuracy (pairwise / verdict) or Pearson (individual).

For verdict items (exam triples, gold labels from people's overrides) each evaluator's row also holds
Cohen's kappa and the confusion table against the gold labels: accuracy alone hides a judge that agrees
only because one label dominates."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from examiner.core.assessments import Assessment, MetaItem
from examiner.reporting.with_overrides import human_agreement
from examiner.stats.agreement_intervals import fisher_interval, wilson_interval
from examiner.stats.correlation import pearson


def baseline(items: Sequence[MetaItem], assessments: Sequence[Assessment], evaluators: Sequence[str]) -> dict[str, Any]:
    """Per evaluator: the baseline score and its counts. Unreadable assessments are counted, not scored.

    Returns {"metric": "accuracy"|"pearson"|None, "scores": {evaluator: value}, "detail": {...}}.
    """
    by_id = {i.id: i for i in items}
    kind = items[0].kind if items else "pairwise"
    metric = "pearson" if kind == "individual" else "accuracy"
    scores: dict[str, float] = {}
    detail: dict[str, dict[str, Any]] = {}
    for e in evaluators:
        mine = [a for a in assessments if a.evaluator == e and a.item_id in by_id]
        ok = [a for a in mine if a.ok]
        row: dict[str, Any] = {"assessed": len(mine), "usable": len(ok), "unparseable": sum(a.status == "unparseable" for a in mine),
                               "failed": sum(a.status == "failed" for a in mine)}
        if metric == "accuracy":
            gold = [(a.decision, by_id[a.item_id].gold_label) for a in ok if by_id[a.item_id].gold_label is not None]
            row["with_gold"] = len(gold)
            if gold:
                row["correct"] = sum(d == g for d, g in gold)
                scores[e] = row["correct"] / len(gold)
                if kind == "verdict":
                    agreement = human_agreement([(str(d), str(g)) for d, g in gold])
                    row.update(cohen_kappa=agreement["cohen_kappa"], confusion=agreement["confusion"])
        else:
            pairs = [(a.score, by_id[a.item_id].gold_score) for a in ok
                     if a.score is not None and by_id[a.item_id].gold_score is not None]
            row["with_gold"] = len(pairs)
            if len(pairs) >= 2:
                r = pearson([p[0] for p in pairs], [p[1] for p in pairs])
                if not math.isnan(r):
                    scores[e] = r
        if e in scores:
            row["value"] = scores[e]
            low, high = (wilson_interval(row["correct"], row["with_gold"]) if metric == "accuracy"
                         else fisher_interval(scores[e], row["with_gold"], "pearson"))
            if math.isfinite(low) and math.isfinite(high):
                row.update(value_low=low, value_high=high)
        detail[e] = row
    return {"metric": metric if scores else None, "scores": scores, "detail": detail}
