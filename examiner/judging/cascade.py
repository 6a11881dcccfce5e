"""The exam's judge cascade: a cheap judge settles the units it is sure of, the strong judge the rest.

How (docs/CASCADE.md; the statistics are examiner.stats.cascade):
1. Every answer of a round is marked by the cheap judge. Where its endpoint returns log-probabilities
   (`confidence: logprobs`, or `auto` on an endpoint with `supports_logprobs`), one greedy call does it: a
   unit's confidence is the probability the judge gave the label it wrote. Otherwise (`samples`, or `auto`
   once a reply came back without logprobs) the judge marks the answer `samples` times in one request
   (temperature > 0); a unit's label is the samples' majority and its confidence the share that gave it.
2. A random share of the answers (`calibration_share`, drawn from a hash of the answer id and the run's
   seed, so the draw is independent of content and order and a resume draws the same) is also marked by
   the strong judge: the strong verdict stands there, and each unit's (cheap label, confidence, strong
   label) joins the calibration sample (cascade.jsonl).
3. The threshold comes from all calibration units so far whose confidence was read the same way (each
   way has its own scale), by fixed-sequence testing: with probability >= 1 - risk, the cheap judge's
   agreement rate with the strong judge on the units it keeps is at least `target_agreement` (a rate over
   the population; the share realised on one exam's kept units may fall below it).
4. On the other answers a unit whose confidence reaches the threshold keeps the cheap verdict; the other
   units of the answer go to the strong judge together, in one call.

The strong judge is the exam's own Ref-Eval judge on the cascade's last endpoint (the `judge` role
resolves to it), so a unit escalated is judged exactly as it would be without a cascade.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import get_args

from examiner.agents.judge.unit_judge import Judgment, judge_with_confidence, sample_judgments
from examiner.core.cascade_records import CascadeRecord, ConfidenceSource
from examiner.core.config import JudgeCascade, Settings
from examiner.core.contract import ExamTask, Judge, Mark
from examiner.core.errors import UserError
from examiner.core.labels import Verdict, verdict_from_text
from examiner.judging.exam_judges import ReferenceJudge
from examiner.llm.gateway import Gateway, ModelCallError
from examiner.stats.cascade import CascadeThreshold, calibrate_threshold
from examiner.core.stages import Stage

CHEAP_STAGE = Stage.JUDGE_CASCADE
"""Ledger stage of the cheap judge's sampled calls (`examiner cost --by stage,endpoint` shows each tier)."""


def in_calibration(answer_id: str, share: float, seed: int = 0) -> bool:
    """Whether an answer is drawn into the calibration sample: a uniform draw from sha256(seed, id)."""
    digest = hashlib.sha256(f"cascade-calibration:{seed}:{answer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


@dataclass(frozen=True)
class CheapReading:
    """The cheap judge's view of one unit: its label, how sure it is, the reason it gave, and whether the
    confidence is a log-probability's or a share of samples."""

    label: str | None
    confidence: float
    reason: str = ""
    source: ConfidenceSource = "samples"


def read_samples(choices: Sequence[Judgment | None], unit_ids: Iterable[str]) -> dict[str, CheapReading]:
    """Majority label and its share per unit; a choice that did not parse, or gave the unit no label,
    counts against every label (it lowers the confidence)."""
    total = max(len(choices), 1)
    out: dict[str, CheapReading] = {}
    for uid in unit_ids:
        votes = Counter(c.labels[uid] for c in choices if c is not None and uid in c.labels)
        if not votes:
            out[uid] = CheapReading(None, 0.0)
            continue
        label, count = max(votes.items(), key=lambda item: (item[1], item[0] == "correct", item[0]))
        reason = next((r.reason for c in choices if c is not None and c.labels.get(uid) == label
                       for r in c.reasons if r.unit == uid), "")
        out[uid] = CheapReading(label, count / total, reason)
    return out


@dataclass(frozen=True)
class FirstPass:
    """One answer after step 1 (and step 2 when it is in the calibration sample)."""

    task: ExamTask
    calibration: bool
    cheap: dict[str, CheapReading]
    strong: dict[str, Mark[Verdict]] | None


def read_logprobs(judgment: Judgment | None, confidences: dict[str, float | None],
                  unit_ids: Iterable[str]) -> dict[str, CheapReading]:
    """Each unit's label in the one greedy judgment and the probability the judge gave it (0 where the
    label's probability cannot be read, so the unit is escalated unless calibration trusts even that)."""
    out: dict[str, CheapReading] = {}
    for uid in unit_ids:
        label = judgment.labels.get(uid) if judgment is not None else None
        reason = next((r.reason for r in judgment.reasons if r.unit == uid), "") if judgment is not None else ""
        p = confidences.get(uid)
        out[uid] = CheapReading(label, p if label is not None and p is not None else 0.0, reason, "logprobs")
    return out


def calibration_records(records: Iterable[CascadeRecord],
                        source: ConfidenceSource | None = None) -> tuple[list[float], list[bool]]:
    """(confidence, agrees) of every calibration unit both judges labelled (only those whose confidence
    came from `source`, when given)."""
    confidences, agrees = [], []
    for record in records:
        if source is not None and record.confidence_source != source:
            continue
        if record.calibration and record.strong_label is not None:
            confidences.append(record.confidence)
            agrees.append(record.cheap_label == record.strong_label)
    return confidences, agrees


class ExamCascade:
    """Steps 1-4 for the exam's judge node (examiner/exam/nodes/judge_cascade.py drives them)."""

    def __init__(self, gateway: Gateway, plan: JudgeCascade, *, seed: int, stage: str = "judge",
                 notes: Callable[[str], None] | None = None) -> None:
        self.gateway = gateway
        self.plan = plan
        self.seed = seed
        self.notes = notes or (lambda _: None)
        self.strong: Judge[ExamTask, Verdict] = ReferenceJudge(gateway, plan.strong, plan.strong, stage=stage)
        self.source: ConfidenceSource = ("samples" if plan.confidence == "samples" else "logprobs"
                                         if plan.confidence == "logprobs" or gateway.resolve("judge", plan.cheap)[1]
                                         .supports_logprobs else "samples")
        """How confidences are read now: `auto` turns to samples when a reply comes without logprobs."""

    def in_calibration(self, answer_id: str) -> bool:
        return in_calibration(answer_id, self.plan.calibration_share, self.seed)

    async def first_pass(self, task: ExamTask, answer_id: str) -> FirstPass:
        """The cheap judge's reading; the strong judge too when the answer is in the calibration sample."""
        cheap = await self.cheap_readings(task)
        calibration = self.in_calibration(answer_id)
        strong = await self.strong.mark(task) if calibration else None
        return FirstPass(task, calibration, cheap, strong)

    async def cheap_readings(self, task: ExamTask) -> dict[str, CheapReading]:
        """Label and confidence per unit, from logprobs or from samples (see the module's step 1). A cheap
        judge that refuses the prompt for want of passages (serve-local's student taught on them answers
        400 naming `cheap_passages`) fails the call with the setting to change, as any refused call fails."""
        try:
            return await self._cheap_readings(task)
        except ModelCallError as exc:
            if self.plan.cheap_passages or "cheap_passages" not in str(exc):
                raise
            raise ModelCallError(f"the cheap judge {self.plan.cheap} reads reference passages: set cheap_passages: "
                                 "true in the judge cascade (to resume, in the run folder's config.yaml)",
                                 exc.attempts) from None

    async def _cheap_readings(self, task: ExamTask) -> dict[str, CheapReading]:
        ids = [uid for uid, _ in task.units]
        passages = dict(task.passages) if self.plan.cheap_passages else None
        if self.source == "logprobs":
            judgment, confidences = await judge_with_confidence(
                self.gateway, task.question, task.answer, list(task.units), round=task.round,
                stage=CHEAP_STAGE, endpoint=self.plan.cheap, passages=passages)
            if self.plan.confidence == "logprobs" or any(p is not None for p in confidences.values()) \
                    or judgment is None:
                return read_logprobs(judgment, confidences, ids)
            self.source = "samples"
            self.notes(f"judge cascade: {self.plan.cheap} gave no log-probabilities of its labels; its "
                       f"confidence is read from {self.plan.samples} samples per answer from now on")
        choices = await sample_judgments(self.gateway, task.question, task.answer, list(task.units),
                                         round=task.round, samples=self.plan.samples,
                                         temperature=self.plan.temperature, stage=CHEAP_STAGE,
                                         endpoint=self.plan.cheap, passages=passages)
        return read_samples(choices, ids)

    def thresholds(self, records: Iterable[CascadeRecord]) -> dict[ConfidenceSource, CascadeThreshold]:
        """The threshold for each way of reading confidence, from the calibration units read that way."""
        kept = list(records)
        out: dict[ConfidenceSource, CascadeThreshold] = {}
        for source in get_args(ConfidenceSource):
            confidences, agrees = calibration_records(kept, source)
            out[source] = calibrate_threshold(confidences, agrees, target_agreement=self.plan.target_agreement,
                                              risk=self.plan.risk)
        return out

    def describe(self, reading: CheapReading) -> str:
        """How a kept unit's confidence was read, for its verdict's reason."""
        if reading.source == "logprobs":
            return f"label probability {reading.confidence:.0%}"
        return f"{reading.confidence:.0%} of {self.plan.samples} samples"

    async def settle(self, first: FirstPass, thresholds: dict[ConfidenceSource, CascadeThreshold],
                     ) -> tuple[dict[str, Mark[Verdict]], dict[str, str]]:
        """Each unit's mark and the tier it came from (`cheap` or `strong`)."""
        if first.strong is not None:
            return first.strong, {uid: "strong" for uid, _ in first.task.units}
        keep = {uid for uid, reading in first.cheap.items()
                if reading.label is not None and reading.confidence >= thresholds[reading.source].threshold}
        marks: dict[str, Mark[Verdict]] = {}
        tiers: dict[str, str] = {}
        for uid in keep:
            reading = first.cheap[uid]
            verdict = verdict_from_text(reading.label or "")
            note = (f"[cheap judge {self.plan.cheap}: {self.describe(reading)}, "
                    f"threshold {thresholds[reading.source].threshold:.2f}]")
            marks[uid] = Mark(verdict, f"{reading.reason} {note}".strip())
            tiers[uid] = "cheap"
        escalated = tuple((uid, text) for uid, text in first.task.units if uid not in keep)
        if escalated:
            strong = await self.strong.mark(ExamTask(first.task.question, first.task.answer, escalated, first.task.round))
            for uid, _ in escalated:
                if uid in strong:
                    marks[uid] = strong[uid]
                tiers[uid] = "strong"
        return marks, tiers


def exam_cascade(gateway: Gateway, settings: Settings, judge_mode: str, reads_references: bool,
                 stage: str, notes: Callable[[str], None] | None = None) -> ExamCascade | None:
    """The run's cascade when its settings name one (None otherwise). A cascade samples the Ref-Eval
    judge's prompt, so it needs that judge and an exam mode that shows references."""
    plan = settings.judge_cascade
    if plan is None:
        return None
    if judge_mode != "refeval" or not reads_references:
        raise UserError(f"a judge cascade works with the Ref-Eval judge on references (--judge-mode refeval, "
                        f"--mode refeval or top); this run asks for judge mode {judge_mode!r}"
                        + ("" if reads_references else " without references"))
    return ExamCascade(gateway, plan, seed=settings.exam.seed, stage=stage, notes=notes)


__all__ = ["CHEAP_STAGE", "exam_cascade", "CheapReading", "ExamCascade", "FirstPass", "calibration_records", "in_calibration",
           "read_logprobs", "read_samples"]
