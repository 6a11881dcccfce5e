"""The exam's judges: each marks every target unit of one answer (`Judge[ExamTask, Verdict]`).

- `ReferenceJudge` (Ref-Eval): one call labels every unit against its reference text. The Top baseline
  uses the same judge; its exam mode puts the unit's source passage in the task as the reference.
- `NoReferenceJudge` (the baseline without reference): one label for the whole answer from the judge's
  own knowledge, applied to every target.
- `RevisEvalJudge`: the reviser corrects the answer against the units (the response-adapted
  reference), then the judge labels each unit for the ORIGINAL answer reading unit and revision.
  Two calls per answer; a failed revision leaves every unit unscored rather than guessing.
- `GEvalJudge`: one form-filling call per unit on the 1-5 agreement scale with 0 beside it for an answer
  that declines (agents/prompting/geval_exam.py); `label_from_form` reads `abstained` from the probability
  on 0, else the expected 1-5 score becomes a label by `label_from_agreement`.

Every judge can be sent to another endpoint than its roles' own (a panel member is one; a RevisEval or
G-Eval member makes all of its calls there). The exam builds its judge once with `exam_judge` and never
asks which kind it holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from examiner.core.contract import ExamTask, Judge, Mark
from examiner.core.labels import Unscored, Verdict, verdict_from_text
from examiner.judging.panel import Panel
from examiner.llm.gateway import Gateway
from examiner.llm.types import Unparseable
from examiner.agents.judge.geval import DEFAULT_SAMPLES
from examiner.agents.judge.geval_math import GEvalScore
from examiner.agents.judge.geval_unit import agreement_steps, unit_agreement
from examiner.agents.prompting.geval_exam import DECLINED
from examiner.agents.judge.unit_judge import judge_units, judge_without_reference, marks_from_verdicts
from examiner.agents.judge.reference_judge import label_units_with_revision
from examiner.agents.reviser.reviser import revise_with_units

CORRECT_AT = 3.5
INCORRECT_AT = 2.5


def label_from_agreement(score: float | Unscored) -> Verdict | Unscored:
    """Expected agreement (1-5) -> correct (>= 3.5) / incorrect (<= 2.5) / unrelated; no score stays unscored."""
    if isinstance(score, Unscored):
        return score
    if score >= CORRECT_AT:
        return Verdict.CORRECT
    if score <= INCORRECT_AT:
        return Verdict.INCORRECT
    return Verdict.UNRELATED


DECLINED_AT = 0.5
"""Probability on the form's 0 (declined) from which G-Eval labels a unit abstained."""


def label_from_form(scored: GEvalScore) -> tuple[Verdict | Unscored, float | None]:
    """A G-Eval form's label: `abstained` when at least DECLINED_AT of its probability (logprobs) or of its
    samples is on 0, else label_from_agreement of the expected score over 1-5 alone (0 renormalised away:
    a decline is not a point of the agreement scale); the 1-5 expectation beside it (None when declined or
    unscored)."""
    if isinstance(scored.score, Unscored):
        return scored.score, None
    declined = scored.probabilities.get(DECLINED, 0.0)
    if declined >= DECLINED_AT:
        return Verdict.ABSTAINED, None
    scale = {s: p for s, p in scored.probabilities.items() if s != DECLINED}
    total = sum(scale.values())
    expected = sum(s * p for s, p in scale.items()) / total if total else float(scored.score)
    return label_from_agreement(expected), expected


def _unscored_all(task: ExamTask, reason: str, raw: str = "") -> dict[str, Mark[Verdict]]:
    return {uid: Mark.unscored(reason, raw) for uid, _ in task.units}


@dataclass(frozen=True)
class _OnEndpoint:
    """What every exam judge holds: the gateway, the endpoint its calls go to (None: its roles' own) and
    its name among a panel's members."""

    gateway: Gateway
    endpoint: str | None = None
    name: str = "judge"


@dataclass(frozen=True)
class ReferenceJudge(_OnEndpoint):
    """Ref-Eval: per-unit verdicts against the reference text in the task. Marks may name ids that are
    not targets (the exam ignores and counts those)."""

    stage: str = "judge"
    """Ledger stage: `judge`, or `judge_top` for the Top baseline."""

    async def mark(self, task: ExamTask) -> dict[str, Mark[Verdict]]:
        result = await judge_units(self.gateway, task.question, task.answer, list(task.units), round=task.round,
                                   stage=self.stage, endpoint=self.endpoint)
        if isinstance(result.parsed, Unparseable):
            return _unscored_all(task, f"unparseable judge reply: {result.parsed.error}", result.text)
        return marks_from_verdicts(result.parsed.verdicts)


@dataclass(frozen=True)
class NoReferenceJudge(_OnEndpoint):
    """The no-reference baseline: one label for the answer, given to every target unit."""

    async def mark(self, task: ExamTask) -> dict[str, Mark[Verdict]]:
        ids = [uid for uid, _ in task.units]
        result = await judge_without_reference(self.gateway, task.question, task.answer, round=task.round,
                                               unit_ids=ids, endpoint=self.endpoint)
        if isinstance(result.parsed, Unparseable):
            return _unscored_all(task, f"unparseable judge reply: {result.parsed.error}", result.text)
        verdict = Mark(verdict_from_text(result.parsed.type), result.parsed.reason)
        return {uid: verdict for uid in ids}


@dataclass(frozen=True)
class RevisEvalJudge(_OnEndpoint):
    """RevisEval: revise the answer against the units, then label each unit reading the revision."""

    async def mark(self, task: ExamTask) -> dict[str, Mark[Verdict]]:
        if not task.units:
            return {}
        units = list(task.units)
        revision = await revise_with_units(self.gateway, question=task.question, answer=task.answer, units=units,
                                           round=task.round, endpoint=self.endpoint)
        if isinstance(revision, Unscored):
            return _unscored_all(task, revision.reason)
        return await label_units_with_revision(self.gateway, question=task.question, answer=task.answer,
                                               revised=revision, units=units, round=task.round,
                                               endpoint=self.endpoint)


@dataclass(frozen=True)
class GEvalJudge(_OnEndpoint):
    """G-Eval: one agreement score per unit, thresholded into a label."""

    samples: int = DEFAULT_SAMPLES
    """Completions averaged when the endpoint gives no logprobs."""

    async def mark(self, task: ExamTask) -> dict[str, Mark[Verdict]]:
        if not task.units:
            return {}
        steps = await agreement_steps(self.gateway, endpoint=self.endpoint)
        marks = await asyncio.gather(*(self._one(task, unit, steps) for unit in task.units))
        return {uid: mark for (uid, _), mark in zip(task.units, marks)}

    async def _one(self, task: ExamTask, unit: tuple[str, str], steps: str) -> Mark[Verdict]:
        scored = await unit_agreement(self.gateway, steps=steps, question=task.question, answer=task.answer,
                                      unit=unit, round=task.round, n=self.samples, endpoint=self.endpoint)
        label, expected = label_from_form(scored)
        if isinstance(label, Unscored):
            return Mark.unscored(f"G-Eval: no usable score ({scored.n_unparseable} unparseable of {scored.n_samples})")
        if expected is None:
            return Mark(label, f"G-Eval: the answer declines (probability {scored.probabilities[DECLINED]:.2f} "
                               f"on 0) via {scored.path}")
        return Mark(label, f"G-Eval agreement {expected:.2f} on 1-5 via {scored.path}")


_BUILD: dict[str, Callable[[Gateway, str, str | None, str], Judge[ExamTask, Verdict]]] = {
    "refeval": lambda gw, stage, endpoint, name: ReferenceJudge(gw, endpoint, name, stage=stage),
    "reviseval": lambda gw, stage, endpoint, name: RevisEvalJudge(gw, endpoint, name),
    "geval": lambda gw, stage, endpoint, name: GEvalJudge(gw, endpoint, name),
}
JUDGE_METHODS = tuple(_BUILD)
"""How an answer is judged against references (`--judge-mode`): examiner.core.names.EXAM_JUDGE_METHODS, in
its order (tests/core/test_names.py)."""


def exam_judge(
    gateway: Gateway, *, method: str, reads_references: bool, stage: str, endpoints: Sequence[str] = ()
) -> Judge[ExamTask, Verdict]:
    """The judge an exam uses, built once: `method` (one of JUDGE_METHODS) when the exam mode shows
    references, else the no-reference judge; with two or more `endpoints` a panel of that judge on each
    of them (members named by endpoint), else one judge (on the `judge` role's endpoint by default)."""

    def one(endpoint: str | None) -> Judge[ExamTask, Verdict]:
        name = endpoint or "judge"
        if not reads_references:
            return NoReferenceJudge(gateway, endpoint, name)
        return _BUILD[method](gateway, stage, endpoint, name)

    if len(endpoints) >= 2:
        return Panel([one(e) for e in endpoints])
    return one(endpoints[0] if endpoints else None)


__all__ = ["GEvalJudge", "JUDGE_METHODS", "NoReferenceJudge", "ReferenceJudge", "RevisEvalJudge", "exam_judge",
           "label_from_agreement", "label_from_form"]
