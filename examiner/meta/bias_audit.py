"""The judge bias audit of a meta-evaluation: the meta-judge's position flips (`--both-orders`), the slope
of its verdicts on the length of the evaluators' explanations, and its self-preference when it is the
same model or family as an evaluator.

Self-preference gap (pairwise methods): on items with a gold label, among the matches between an evaluator
of the meta-judge's own family and another where exactly one of the two assessments is right, the
meta-judge's accuracy (it picked the right one; a tie counts half) when the right one is its own family's
minus when it is the other's. A judge without self-preference has the same accuracy either way, whatever
the evaluators' quality. Individual methods compare the meta-scores of own-family assessments with the
others' (which mixes in their quality; the report says so). One meta-judge: no panel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from examiner.core.assessments import Assessment, MetaJudgment
from examiner.core.labels import Preference
from examiner.core.tokens import count_tokens
from examiner.reporting.bias_audit import length_item, not_measured, position_item, self_matches, \
    self_preference_item

_SCORE = {Preference.FIRST: 1.0, Preference.TIE: 0.5, Preference.SECOND: 0.0}
GOLD_GAP_REASON = ("no item with a gold label where exactly one of an own-family and another evaluator's "
                   "assessments is right")


def _tokens(assessments: Mapping[tuple[str, str], Assessment]) -> dict[tuple[str, str], int]:
    return {key: count_tokens(a.explanation) for key, a in assessments.items()}


def _pairwise_gap(judge: str, own: set[str], judgments: Sequence[MetaJudgment],
                  right: Mapping[tuple[str, str], bool]) -> dict[str, tuple[list[float], list[bool], list[str]]]:
    outcome, is_self, groups = [], [], []
    for j in judgments:
        if j.outcome is None or (j.assistant_1 in own) == (j.assistant_2 in own):
            continue
        r1, r2 = right.get((j.item_id, j.assistant_1)), right.get((j.item_id, j.assistant_2))
        if r1 is None or r2 is None or r1 == r2:
            continue
        first_wins = _SCORE[j.outcome]
        outcome.append(first_wins if r1 else 1.0 - first_wins)
        is_self.append((j.assistant_1 if r1 else j.assistant_2) in own)
        groups.append(j.item_id)
    return {judge: (outcome, is_self, groups)} if any(is_self) and not all(is_self) else {}


def meta_bias_audit(run: Any, judge: str, names: Mapping[str, str]) -> dict[str, Any]:
    """The section for a MetaRun (examiner.meta.pipeline) judged by the endpoint `judge`; `names`: endpoint
    (or imported evaluator) -> model name, as examiner.reporting.bias_audit.model_names gives them."""
    config = run.config
    evaluators = list(dict.fromkeys(config.evaluators))
    by_key = {(a.item_id, a.evaluator): a for a in run.assessments if a.ok}
    tokens = _tokens(by_key)
    matches = self_matches({judge: names.get(judge, judge)}, {e: names.get(e, e) for e in evaluators})
    own = {m["target"] for m in matches}
    if config.method in ("jdeval", "mdeval"):
        if config.both_orders and run.counts.get("order_consistency"):
            oc = run.counts["order_consistency"]
            position = position_item(int(oc["pairs_both_orders"]) - int(oc["agreeing"]), int(oc["pairs_both_orders"]),
                                     note="a flip: the two orders of a pair gave different winners")
        else:
            position = not_measured("each pair was shown in one order (examiner meta --both-orders shows both)")
        usable = [j for j in run.judgments if j.outcome is not None and (j.item_id, j.assistant_1) in tokens
                  and (j.item_id, j.assistant_2) in tokens]
        gold = {i.id: i.gold_label for i in run.items if i.gold_label is not None}
        right = {key: a.decision == gold[key[0]] for key, a in by_key.items() if key[0] in gold}
        strata = [(right.get((j.item_id, j.assistant_1)), right.get((j.item_id, j.assistant_2))) for j in usable]
        by_gold = bool(usable) and all(None not in s for s in strata)  # which assessment is right, held fixed
        length = length_item([_SCORE[j.outcome] for j in usable],
                             [tokens[(j.item_id, j.assistant_1)] - tokens[(j.item_id, j.assistant_2)] for j in usable],
                             [j.item_id for j in usable], strata if by_gold else None,
                             outcome_text="Assistant1 preferred = 1, tie = 0.5, Assistant2 = 0, on the tokens of "
                                          "Assistant1's explanation minus Assistant2's"
                                          + (" (a fixed effect per which one is right)" if by_gold else ""),
                             length_text="tokens of explanation difference")
        gaps = _pairwise_gap(judge, own, run.judgments, right) if matches else {}
        self_pref = self_preference_item(matches, gaps, judges={judge: names.get(judge, judge)},
                                         all_self_reason=GOLD_GAP_REASON)
        if self_pref.get("gaps"):
            self_pref["note"] = ("The gap is the meta-judge's accuracy when the right assessment is its own "
                                 "family's minus when it is the other's (matches where exactly one is right).")
    else:
        position = not_measured("the meta-judge scores one assessment at a time: no order to swap")
        scored = [j for j in run.individual if j.score is not None and (j.item_id, j.evaluator) in tokens]
        length = length_item([float(j.score) for j in scored], [tokens[(j.item_id, j.evaluator)] for j in scored],
                             [j.item_id for j in scored], outcome_text="the meta-score of the assessment",
                             length_text="tokens of explanation")
        gaps = {judge: ([float(j.score) for j in scored], [j.evaluator in own for j in scored],
                        [j.item_id for j in scored])} if matches else {}
        self_pref = self_preference_item(matches, gaps, judges={judge: names.get(judge, judge)})
    return {"position": position, "length": length, "self_preference": self_pref,
            "panel": not_measured("one meta-judge, no panel")}


__all__ = ["GOLD_GAP_REASON", "meta_bias_audit"]
