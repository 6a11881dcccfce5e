"""Pairwise judging by a judge cascade (docs/CASCADE.md): a cheap judge settles the pairs it is sure of,
the strong judge the rest, with a promised agreement rate (risk-controlled) on the pairs the cheap judge keeps.

Pass 1: the cheap judge grades every pair, in both orderings with --swap. Where its endpoint returns
log-probabilities (`confidence` logprobs, or auto on an endpoint with `supports_logprobs`), one greedy
grade line per ordering: each verdict's probability comes from the two scores' distributions
(agents/judge/grade_confidence.py), read back into the original order and averaged over the orderings;
the cheap verdict is the most probable and its confidence that probability. Otherwise `samples` grade
lines per ordering (one request of n choices), each read back into the original order, so a judge that
changes its mind when the answers swap is less confident; the cheap verdict is the samples' majority and
its confidence the majority's share. A random share of the rows (hash of the row id) is also judged by the
strong judge: the calibration sample. Pass 2: the threshold from the calibration rows (examiner.stats.cascade,
fixed-sequence testing); rows at or above it keep the cheap verdict, the others are judged by the strong
judge exactly as without a cascade.

Records are those of `examiner judge --method pairwise` plus `tier` (cheap | strong), `calibration`,
`cheap_verdict`, `confidence` and `threshold`, so judge-stats reads them unchanged.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from examiner.agents.judge.pairwise_judge import grade_probabilities, sample_pair_preferences
from examiner.core.assessments import pairwise_oracle
from examiner.core.cascade_records import ConfidenceSource
from examiner.core.errors import UserError
from examiner.core.ledger_record import LedgerRecord
from examiner.core.labels import Preference, Preferred
from examiner.judging.bias_audit import lengths
from examiner.judging.cascade import in_calibration
from examiner.judging.dataset import Row
from examiner.judging.pairwise import PairwiseJudge, PairwiseOptions, error_records, judge_row, number
from examiner.judging.row_runner import RunFlags, judge_rows
from examiner.llm.gateway import Gateway
from examiner.stats.cascade import CascadeThreshold, calibrate_threshold
from examiner.core.stages import Stage

CHEAP_STAGE = Stage.GRADE_CASCADE


@dataclass(frozen=True)
class PairCascadePlan:
    """The two endpoints and the promise (the same knobs as an exam's `JudgeCascade`)."""

    cheap: str
    strong: str
    target_agreement: float = 0.9
    risk: float = 0.1
    calibration_share: float = 0.2
    samples: int = 5
    temperature: float = 0.7
    seed: int = 0
    confidence: Literal["auto", "logprobs", "samples"] = "auto"
    """How the cheap judge's confidence is read (as an exam cascade's `confidence`)."""
    reference: Literal["strong", "gold"] = "strong"
    """What the promised agreement is with: the strong judge's verdicts, or the rows' gold (human) labels
    (calibration then compares the cheap verdict with the gold label of each calibration row)."""


@dataclass(frozen=True)
class CheapPair:
    verdict: Preference | None
    confidence: float
    source: ConfidenceSource = "samples"


def majority(preferences: Sequence[Preferred]) -> CheapPair:
    """The most frequent preference and its share of all samples (unscored samples count against it)."""
    votes = Counter(p for p in preferences if isinstance(p, Preference))
    if not votes:
        return CheapPair(None, 0.0)
    verdict, count = max(votes.items(), key=lambda item: (item[1], item[0] == Preference.TIE, item[0].value))
    return CheapPair(verdict, count / max(len(preferences), 1))


def most_probable(per_order: Sequence[dict[Preference, float]]) -> CheapPair:
    """The verdict with the highest probability averaged over the orderings (each already in the original
    labelling) and that probability."""
    mean = {v: sum(p.get(v, 0.0) for p in per_order) / len(per_order) for v in Preference}
    verdict, p = max(mean.items(), key=lambda item: (item[1], item[0] == Preference.TIE, item[0].value))
    return CheapPair(verdict if p > 0 else None, p, "logprobs")


def _in_original_order(probabilities: dict[Preference, float], order: str) -> dict[Preference, float]:
    return {(v.swapped() if order == "swapped" else v): p for v, p in probabilities.items()}


class CheapPairJudge:
    """The cheap judge of a pairwise cascade: reads each row by logprobs or samples (see the module)."""

    def __init__(self, gw: Gateway, opts: PairwiseOptions, plan: PairCascadePlan,
                 notes: Callable[[str], None] | None = None) -> None:
        self.gw, self.opts, self.plan = gw, opts, plan
        self.notes = notes or (lambda _: None)
        self.source: ConfidenceSource = ("samples" if plan.confidence == "samples" else "logprobs"
                                         if plan.confidence == "logprobs" or gw.resolve("pairwise", plan.cheap)[1]
                                         .supports_logprobs else "samples")

    def orders(self, row: Row) -> list[tuple[str, str, str]]:
        return [("original", row.output_1, row.output_2)] + (
            [("swapped", row.output_2, row.output_1)] if self.opts.swap else [])

    async def read(self, row: Row) -> CheapPair:
        if self.source == "logprobs":
            reference = row.reference if self.opts.use_reference else None
            graded = await asyncio.gather(*(
                grade_probabilities(self.gw, instruction=row.instruction, answer_1=first, answer_2=second,
                                    reference=reference, tie_threshold=self.opts.tie_threshold,
                                    item_id=f"{row.id}:{order}", endpoint=self.plan.cheap, stage=CHEAP_STAGE)
                for order, first, second in self.orders(row)))
            read = [_in_original_order(p, order) for (order, _, _), (_, p) in zip(self.orders(row), graded)
                    if p is not None]
            if self.plan.confidence == "logprobs" or read:
                return most_probable(read) if len(read) == len(graded) else CheapPair(None, 0.0, "logprobs")
            self.source = "samples"
            self.notes(f"judge cascade: {self.plan.cheap} gave no log-probabilities of its grades; its "
                       f"confidence is read from {self.plan.samples} samples per ordering from now on")
        return await cheap_reading(self.gw, row, self.opts, self.plan)


async def cheap_reading(gw: Gateway, row: Row, opts: PairwiseOptions, plan: PairCascadePlan) -> CheapPair:
    """The cheap judge's samples over the orderings judged, in the row's original labelling."""
    reference = row.reference if opts.use_reference else None
    orders = [("original", row.output_1, row.output_2)] + ([("swapped", row.output_2, row.output_1)] if opts.swap else [])
    drawn = await asyncio.gather(*(
        sample_pair_preferences(gw, instruction=row.instruction, answer_1=first, answer_2=second,
                                samples=plan.samples, temperature=plan.temperature, reference=reference,
                                tie_threshold=opts.tie_threshold, item_id=f"{row.id}:{order}",
                                endpoint=plan.cheap, stage=CHEAP_STAGE)
        for order, first, second in orders))
    samples: list[Preferred] = []
    for (order, _, _), shown in zip(orders, drawn):
        samples += [p.swapped() if order == "swapped" and isinstance(p, Preference) else p for p in shown]
    return majority(samples)


async def register_pairwise_gold(gw: Gateway, rows: Sequence[Row], endpoints: Sequence[str]) -> None:
    """Tell simulated endpoints the rows' gold labels, so a simulated judge's accuracy is measured against
    them (real endpoints are left alone): what a cascade calibrated on gold labels is tested with."""
    gold = pairwise_oracle((row.instruction, row.output_1, row.output_2, number(row.label) or 0)
                           for row in rows if row.label is not None)
    for name in dict.fromkeys(endpoints):
        await gw.register_oracle(name, gold)


def _strong_label(records: list[dict[str, Any]]) -> int | None:
    """The strong judge's verdict on a row: its original-order record's."""
    return next((r["verdict"] for r in records if r["order"] == "original"), None)


async def run_pairwise_cascade(gw: Gateway, rows: list[Row], opts: PairwiseOptions, plan: PairCascadePlan,
                               flags: RunFlags | None = None, notes: Callable[[str], None] | None = None,
                               ) -> tuple[list[dict[str, Any]], CascadeThreshold]:
    """Judgment records for every row (row order) and the threshold the cascade used (that of the way
    most rows' confidence was read; rows read the other way, after auto fell back, have their own)."""
    flags = flags or RunFlags()
    if plan.reference == "gold" and not any(row.label is not None for row in rows):
        raise UserError("a cascade calibrated on gold labels needs rows with a label (--label-field); "
                        "these rows have none")
    cheap = CheapPairJudge(gw, opts, plan, notes)
    strong = PairwiseJudge(gw, replace(opts, endpoint=plan.strong), plan.strong)
    calibration = {row.id for row in rows if in_calibration(row.id, plan.calibration_share, plan.seed)}
    readings: dict[str, CheapPair] = {}
    strong_records: dict[str, list[dict[str, Any]]] = {}
    by_id = {row.id: row for row in rows}

    async def first_pass(row: Row) -> list[dict[str, Any]]:
        readings[row.id] = await cheap.read(row)
        if row.id in calibration:
            strong_records[row.id] = await judge_row(strong, row)
        return []

    await judge_rows(rows, first_pass, lambda r, m: [], flags)
    thresholds: dict[ConfidenceSource, CascadeThreshold] = {}
    for source in get_args(ConfidenceSource):
        confidences, agrees = [], []
        for row_id in sorted(calibration & set(strong_records)):
            label = (number(by_id[row_id].label) if plan.reference == "gold"
                     else _strong_label(strong_records[row_id]))
            if label is not None and readings[row_id].source == source:
                confidences.append(readings[row_id].confidence)
                agrees.append(number(readings[row_id].verdict) == label)
        thresholds[source] = calibrate_threshold(confidences, agrees, target_agreement=plan.target_agreement,
                                                 risk=plan.risk)
    sources = Counter(reading.source for reading in readings.values())
    threshold = thresholds[sources.most_common(1)[0][0] if sources else cheap.source]

    def kept(row: Row) -> bool:
        reading = readings.get(row.id)
        return (row.id not in calibration and reading is not None and reading.verdict is not None
                and reading.confidence >= thresholds[reading.source].threshold)

    async def second_pass(row: Row) -> list[dict[str, Any]]:
        reading = readings.get(row.id, CheapPair(None, 0.0, cheap.source))
        own = thresholds[reading.source]
        extra = {"calibration": row.id in calibration, "cheap_verdict": number(reading.verdict),
                 "confidence": reading.confidence, "confidence_source": reading.source,
                 "threshold": own.threshold if own.keeps_any and row.id not in calibration else None}
        if kept(row):
            return [_cheap_record(row, order, reading, opts, plan, own) | extra | {"tier": "cheap"}
                    for order in (["original", "swapped"] if opts.swap else ["original"])]
        records = strong_records.get(row.id) or await judge_row(strong, row)
        return [r | extra | {"tier": "strong"} for r in records]

    if flags.budget_exhausted:
        return [], threshold
    records = await judge_rows(rows, second_pass, lambda r, m: error_records(r, m, opts), flags)
    return records, threshold


def _cheap_record(row: Row, order: str, reading: CheapPair, opts: PairwiseOptions, plan: PairCascadePlan,
                  threshold: CascadeThreshold) -> dict[str, Any]:
    verdict = reading.verdict
    shown = verdict.swapped() if order == "swapped" and verdict is not None else verdict
    return {"id": row.id, "line": row.line, "method": "pairwise", "order": order, "verdict": number(verdict),
            "verdict_shown": number(shown), "score_1": None, "score_2": None,
            "reason": (f"cheap judge {plan.cheap}: "
                       + (f"verdict probability {reading.confidence:.0%}" if reading.source == "logprobs"
                          else f"{reading.confidence:.0%} of its samples agree")
                       + f" (threshold {threshold.threshold:.2f})"),
            "unscored": None, "label": number(row.label),
            "reference_used": opts.use_reference and row.reference is not None,
            **lengths(row.output_1, row.output_2)}


def cascade_summary(records: list[dict[str, Any]], plan: PairCascadePlan, threshold: CascadeThreshold) -> dict[str, Any]:
    """Rows per tier, the calibration sample and its measured agreement (for the judging report): with the
    strong judge's verdict, or with the gold label when the cascade was calibrated on gold labels."""
    originals = [r for r in records if r.get("order") == "original" and "tier" in r]
    against = "label" if plan.reference == "gold" else "verdict"
    calibration = [r for r in originals if r["calibration"] and r.get(against) is not None]
    kept_cal = [r for r in calibration if threshold.keeps_any and r["confidence"] >= threshold.threshold]
    return {
        "cheap": plan.cheap, "strong": plan.strong, "target_agreement": plan.target_agreement, "risk": plan.risk,
        "calibration_share": plan.calibration_share, "samples": plan.samples,
        "confidence_source": ", ".join(sorted({r.get("confidence_source", "samples") for r in originals})) or "samples",
        "rows": len(originals),
        "settled_cheap": sum(1 for r in originals if r["tier"] == "cheap"),
        "settled_strong": sum(1 for r in originals if r["tier"] == "strong" and not r["calibration"]),
        "calibration_rows": len(calibration),
        "threshold": threshold.threshold if threshold.keeps_any else None,
        "calibration_agreement": (sum(r["cheap_verdict"] == r.get(against) for r in calibration) / len(calibration)
                                  if calibration else None),
        "kept_agreement": (sum(r["cheap_verdict"] == r.get(against) for r in kept_cal) / len(kept_cal)
                           if kept_cal else None),
        "reference": plan.reference,
    }


def cascade_spend(ledger: list[LedgerRecord], summary: dict[str, Any]) -> dict[str, Any]:
    """What each tier cost (the ledger's answered calls to its endpoint, cache hits free) and what the strong
    judge alone would have: its dollars per row it judged, times every row (as the exam cascade's report)."""
    from examiner.llm.ledger import answered

    def dollars(endpoint: str) -> float:
        return sum(r.cost_usd for r in answered(ledger) if r.endpoint == endpoint and not r.cache_hit)

    cheap, strong = dollars(summary["cheap"]), dollars(summary["strong"])
    strong_rows = summary["rows"] - summary["settled_cheap"]
    strong_only = strong / strong_rows * summary["rows"] if strong_rows and strong else None
    return {"cheap_usd": round(cheap, 8), "strong_usd": round(strong, 8),
            "strong_only_usd": round(strong_only, 8) if strong_only is not None else None,
            "spend_ratio": (cheap + strong) / strong_only if strong_only else None}


__all__ = ["CheapPair", "CheapPairJudge", "PairCascadePlan", "cascade_spend", "cascade_summary", "cheap_reading",
           "majority", "most_probable", "register_pairwise_gold", "run_pairwise_cascade"]
