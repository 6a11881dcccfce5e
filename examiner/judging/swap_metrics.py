"""Reliability and agreement metrics of pairwise judgments (JudgeLM section of docs/METHODS.md §4).

Input: judgments, each for one pair `id` in one `order` ("original" or "swapped"), with the preference
expressed in the ORIGINAL labelling (FIRST = the pair's first response wins, SECOND, TIE, or Unscored).
Works for judgments made by `examiner judge` or imported from elsewhere. Class lists in the output are
in the gold-label spelling (1, 2, 0), as the published tables write them.

- agreement / macro P, R, F1 against labels or a teacher, over every parseable judgment (both orders
  count); macro averages run over the classes present in gold or predictions (so a dataset without
  ties is not penalised for an absent tie class unless the judge predicts ties). With `own_class`
  (`--unparseable own-class`), unparseable judgments stay in as a class of their own that is never
  correct and the averages run over the gold classes only: scikit-learn's
  `f1_score(gold, pred, labels=<gold classes>, average="macro")`, PandaLM's published convention.
- consistency: share of pairs judged in both orders (both parseable) with the same verdict, with its 95 %
  Wilson interval (consistency_low, consistency_high) over those pairs, taken as independent.
- bias: an inconsistent pair favours the first position when, summed over its two judgments, the
  response shown first fared better (+1 for a first-position win, -1 for a second-position win, 0 for a
  tie); every inconsistent pair favours exactly one position. `bias_first` / `bias_second` are shares
  of the inconsistent pairs (docs/METHODS.md); the `_all_pairs` variants are shares of all complete pairs,
  JudgeLM's table convention, where consistency + bias_first_all_pairs + bias_second_all_pairs = 1.
  delta bias = |bias first - bias second| in each convention.
- unparseable judgments are counted, never scored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from examiner.core.labels import Preference, Preferred, Unscored, is_scored, preference_from_text, preference_to_number
from examiner.stats.agreement_intervals import wilson_interval

ORDERS = ("original", "swapped")
CLASSES = (Preference.FIRST, Preference.SECOND, Preference.TIE)
_LEAN = {Preference.FIRST: 1, Preference.SECOND: -1, Preference.TIE: 0}


@dataclass(frozen=True)
class Judgment:
    """One preference on one ordering of a pair, in the original labelling."""

    id: str
    order: str
    verdict: Preferred


def record_preference(value: Any) -> Preferred:
    """A judgments-JSONL verdict (1, 2, 0, or null for none) as a preference."""
    return Unscored("unparseable") if value is None else preference_from_text(value)


def judgments(records: Iterable[Mapping[str, Any]]) -> list[Judgment]:
    """Judgment values of pairwise records (judgments.jsonl rows)."""
    return [Judgment(str(r["id"]), str(r.get("order", "original")), record_preference(r.get("verdict")))
            for r in records]


def _shown(verdict: Preference, order: str) -> Preference:
    """The preference in the order shown to the judge (FIRST = first position)."""
    return verdict if order == "original" else verdict.swapped()


def classification_metrics(pred: Sequence[Preferred], gold: Sequence[Preference], *, over_gold: bool = False,
                           ) -> dict[str, float | int | list[int]]:
    """Accuracy with its 95 % Wilson interval (accuracy_low, accuracy_high: rows taken as independent) and
    macro precision / recall / F1 over the classes present in pred or gold (`over_gold`: in gold only; an
    unparseable prediction is then a class of its own, never correct, that lowers recall only)."""
    if len(pred) != len(gold):
        raise ValueError("pred and gold must have the same length")
    n = len(pred)
    present = set(gold) if over_gold else set(gold) | {p for p in pred if isinstance(p, Preference)}
    labels = [c for c in CLASSES if c in present]
    precisions, recalls, f1s = [], [], []
    for c in labels:
        tp = sum(1 for p, g in zip(pred, gold) if p == c and g == c)
        predicted = sum(1 for p in pred if p == c)
        actual = sum(1 for g in gold if g == c)
        precision = tp / predicted if predicted else 0.0
        recall = tp / actual if actual else 0.0
        precisions.append(precision)
        recalls.append(recall)
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    k = len(labels) or 1
    correct = sum(1 for p, g in zip(pred, gold) if p == g)
    low, high = wilson_interval(correct, n)
    return {
        "n": n,
        "accuracy": correct / n if n else float("nan"),
        "accuracy_low": low,
        "accuracy_high": high,
        "macro_precision": sum(precisions) / k if labels else float("nan"),
        "macro_recall": sum(recalls) / k if labels else float("nan"),
        "macro_f1": sum(f1s) / k if labels else float("nan"),
        "classes": [preference_to_number(c) for c in labels],
    }


def agreement(judgments: Iterable[Judgment],
              gold: Mapping[str, Preference] | Mapping[tuple[str, str], Preference], *,
              own_class: bool = False) -> dict[str, object]:
    """Agreement with gold labels (keyed by id) or a teacher (keyed by (id, order) or id). Unparseable
    judgments are left out, or with `own_class` kept as a class of their own (never correct; macro
    averages over the gold classes)."""
    pred: list[Preferred] = []
    ref: list[Preference] = []
    by_order: dict[str, tuple[list[Preferred], list[Preference]]] = {o: ([], []) for o in ORDERS}
    unparseable = no_gold = 0
    for j in judgments:
        target = gold.get((j.id, j.order)) if (j.id, j.order) in gold else gold.get(j.id)  # type: ignore[call-overload]
        if target is None:
            no_gold += 1
            continue
        if not isinstance(j.verdict, Preference):
            unparseable += 1
            if not own_class:
                continue
        pred.append(j.verdict)
        ref.append(target)
        if j.order in by_order:
            by_order[j.order][0].append(j.verdict)
            by_order[j.order][1].append(target)
    out: dict[str, object] = dict(classification_metrics(pred, ref, over_gold=own_class))
    out["n_unparseable"] = unparseable
    out["n_without_gold"] = no_gold
    out["by_order"] = {o: classification_metrics(p, g, over_gold=own_class) for o, (p, g) in by_order.items() if p}
    return out


def swap_metrics(judgments: Iterable[Judgment]) -> dict[str, float | int]:
    """Consistency under swap and positional bias (see module docstring)."""
    pairs: dict[str, dict[str, Preferred]] = {}
    counts: Counter[str] = Counter()
    for j in judgments:
        counts["judgments"] += 1
        if not is_scored(j.verdict):
            counts["unparseable"] += 1
        pairs.setdefault(j.id, {})[j.order] = j.verdict
    complete = consistent = first = second = 0
    one_order = incomplete = 0
    for orders in pairs.values():
        if not all(o in orders for o in ORDERS):
            one_order += 1
            continue
        v1, v2 = orders["original"], orders["swapped"]
        if not isinstance(v1, Preference) or not isinstance(v2, Preference):
            incomplete += 1
            continue
        complete += 1
        if v1 == v2:
            consistent += 1
            continue
        lean = _LEAN[_shown(v1, "original")] + _LEAN[_shown(v2, "swapped")]
        if lean > 0:
            first += 1
        else:
            second += 1
    inconsistent = complete - consistent
    nan = float("nan")
    b1 = first / inconsistent if inconsistent else (0.0 if complete else nan)
    b2 = second / inconsistent if inconsistent else (0.0 if complete else nan)
    a1 = first / complete if complete else nan
    a2 = second / complete if complete else nan
    low, high = wilson_interval(consistent, complete)
    return {
        "n_judgments": counts["judgments"],
        "n_unparseable": counts["unparseable"],
        "n_pairs": len(pairs),
        "n_pairs_both_orders": complete,
        "n_pairs_one_order_only": one_order,
        "n_pairs_with_unparseable": incomplete,
        "n_inconsistent": inconsistent,
        "consistency": consistent / complete if complete else nan,
        "consistency_low": low,
        "consistency_high": high,
        "bias_first": b1,
        "bias_second": b2,
        "delta_bias": abs(b1 - b2),
        "bias_first_all_pairs": a1,
        "bias_second_all_pairs": a2,
        "delta_bias_all_pairs": abs(a1 - a2),
    }
