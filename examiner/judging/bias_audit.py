"""The judge bias audit of a judging run (`examiner judge`, `judge-stats`), from its judgment records.

Pairwise records: the flip rate over pairs judged in both orders (`--swap`), the slope of the preference
for response 1 (1, a tie 0.5, response 2 0; original labelling) on the length difference of the two
responses (pairs as clusters, so both orders of a pair count once), and the panel members' agreement on
each (pair, order). Single-score records: the slope of the score on the response's length (clusters: the
records' `group`, else each row), and self-preference where rows name the model that wrote the response
(`system`). The items and their wording are the exam's (examiner/reporting/bias_audit.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from examiner.core.labels import Preference, preference_from_text
from examiner.core.tokens import count_tokens
from examiner.judging.swap_metrics import judgments, swap_metrics
from examiner.reporting.bias_audit import length_item, not_measured, panel_item, position_item, self_matches, \
    self_preference_item

NO_LENGTHS = ("the judgments record no response lengths (judged before examiner recorded them, or made "
              "elsewhere and read by judge-stats)")
_SCORE = {Preference.FIRST: 1.0, Preference.TIE: 0.5, Preference.SECOND: 0.0}


def lengths(*texts: str) -> dict[str, int]:
    """What a judgment record keeps of its responses for the audit: their lengths in tokens."""
    names = ("length",) if len(texts) == 1 else tuple(f"length_{i}" for i in range(1, len(texts) + 1))
    return {name: count_tokens(text) for name, text in zip(names, texts)}


def _preference(value: Any) -> Preference | None:
    if value is None:
        return None
    try:
        return preference_from_text(value)
    except ValueError:
        return None


def _judge_name(meta: Mapping[str, Any]) -> str | None:
    name = meta.get("model") or meta.get("judge")
    return None if not name or str(name).startswith(("panel of", "role defaults")) else str(name)


def _panel(records: Sequence[Mapping[str, Any]], key: Any) -> dict[str, Any]:
    panelled = [r for r in records if r.get("panel")]
    if not panelled:
        return not_measured("one judge, no panel (give --judge two or more times for one)")
    members = list(dict.fromkeys(m for r in panelled for m in r["panel"]))
    labels = {m: {key(r): r["panel"].get(m, {}).get("verdict") for r in panelled} for m in members}
    groups = {key(r): str(r["id"]) for r in panelled}
    return panel_item(labels, groups)


def pairwise_audit(records: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> dict[str, Any]:
    """Flip rate under swap, the length slope of the preference, no self-preference (the rows name no
    model per response), and the panel's agreement."""

    js = judgments(records)
    if any(j.order == "swapped" for j in js):
        swap = swap_metrics(js)
        position = position_item(int(swap["n_inconsistent"]), int(swap["n_pairs_both_orders"]),
                                 note="a flip: the two orders of a pair gave different verdicts")
    else:
        position = not_measured("no pair was judged in both orders (examiner judge --swap judges both)")
    usable = [(r, p) for r in records if (p := _preference(r.get("verdict"))) is not None]
    if not records or any("length_1" not in r for r, _ in usable) or not usable:
        length = not_measured(NO_LENGTHS if records else "no judgment")
    else:
        gold = [r.get("label") for r, _ in usable]
        by_gold = all(g is not None for g in gold)  # the judge following the labels is no length taste
        length = length_item([_SCORE[p] for _, p in usable], [r["length_1"] - r["length_2"] for r, _ in usable],
                             [str(r["id"]) for r, _ in usable], [str(g) for g in gold] if by_gold else None,
                             outcome_text="response 1 preferred = 1, tie = 0.5, response 2 = 0, on the tokens of "
                                          "response 1 minus response 2"
                                          + (" (a fixed effect per gold label)" if by_gold else ""),
                             length_text="tokens of length difference")
    return {"position": position, "length": length,
            "self_preference": not_measured("the pairs name no model per response"),
            "panel": _panel(records, lambda r: f"{r['id']}:{r.get('order', 'original')}")}


def single_audit(records: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> dict[str, Any]:
    """No swap (one response per judgment), the length slope of the score, and self-preference against the
    rows' `system` names."""
    scored = [r for r in records if r.get("score") is not None]
    if not scored:
        length = not_measured("no judgment has a score")
    elif any("length" not in r for r in scored):
        length = not_measured(NO_LENGTHS)
    else:
        length = length_item([float(r["score"]) for r in scored], [r["length"] for r in scored],
                             [str(r.get("group") or r["id"]) for r in scored], outcome_text="the judge's score")
    systems = sorted({str(r["system"]) for r in scored if r.get("system")})
    judge = _judge_name(meta)
    if not systems:
        self_pref = not_measured("the rows name no model per response (the dataset's system field)")
    elif judge is None:
        self_pref = not_measured("the judge's model is not recorded")
    else:
        matches = self_matches({judge: judge}, {s: s for s in systems})
        own = {m["target"] for m in matches}
        with_system = [r for r in scored if r.get("system")]
        gaps = {judge: ([float(r["score"]) for r in with_system], [str(r["system"]) in own for r in with_system],
                        [str(r.get("group") or r["id"]) for r in with_system])} if matches else {}
        self_pref = self_preference_item(matches, gaps, judges={judge: judge})
    return {"position": not_measured("single-score judging shows one response at a time: no order to swap"),
            "length": length, "self_preference": self_pref,
            "panel": not_measured("one judge, no panel (single-score methods judge alone)")}


def judge_bias_audit(records: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], pairwise: bool) -> dict[str, Any]:
    """The bias audit section of a judging report (report.json's `bias_audit`)."""
    return pairwise_audit(records, meta) if pairwise else single_audit(records, meta)


__all__ = ["NO_LENGTHS", "judge_bias_audit", "lengths", "pairwise_audit", "single_audit"]
