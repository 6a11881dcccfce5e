"""RevisEval and G-Eval as judge modes of the exam graph: per-unit verdicts for one answer.

Both return {unit_id: (type, reason)} with type in correct / incorrect / unrelated / unparseable, the
shape the Ref-Eval judge produces, so the exam graph can swap judges without other changes.

RevisEval mapping: the reviser rewrites the candidate's answer into a corrected version using the
question's reference units as the rubric (the response-adapted reference); then the judge labels each
unit for the ORIGINAL answer, reading both the unit and the revised reference (the revision shows which
parts needed correcting). Two calls per answer (reviser, judge). A failed revision (empty reply) makes
every unit `unparseable` rather than guessing.

G-Eval mapping: one form-filling call per unit on a bipolar 1-5 "agreement" scale: 1 = the answer
contradicts the unit, 3 = the answer does not address it, 5 = the answer states it correctly. The
expected score (from logprobs, else the mean of samples) is mapped to labels by thresholds:
>= 3.5 correct, <= 2.5 incorrect, otherwise unrelated. Putting "not addressed" at the middle of the
scale makes an unsure judge (mass on both 1 and 5) land on `unrelated`, which an exam counts as
"no evidence either way" instead of a wrong credit. The evaluation steps are written once per gateway
(cached per task and criterion).
"""

from __future__ import annotations

import asyncio

from examiner.roles.geval import DEFAULT_SAMPLES, evaluation_steps, form_fill
from examiner.roles.reference_judge import label_units_with_revision
from examiner.roles.reviser import revise_with_units
from examiner.llm.gateway import Gateway
from examiner.prompting import render, unit_block

GEVAL_TASK = ("You will be given a question, a reference fact about its subject, and a response written by "
              "a candidate. Your task is to rate how the response relates to the reference fact.")
GEVAL_CRITERION = ("Agreement (1-5): whether the response states the reference fact correctly. "
                   "1 = the response contradicts the fact; 2 = it partly contradicts it; 3 = the response "
                   "does not address the fact at all; 4 = it states the fact with minor inaccuracy or "
                   "vagueness; 5 = it states the fact correctly.")
CORRECT_AT = 3.5
INCORRECT_AT = 2.5


def label_from_agreement(score: float | None) -> str:
    """Expected agreement (1-5) -> correct / incorrect / unrelated; None -> unparseable."""
    if score is None:
        return "unparseable"
    if score >= CORRECT_AT:
        return "correct"
    if score <= INCORRECT_AT:
        return "incorrect"
    return "unrelated"


async def reviseval_unit_verdicts(
    gateway: Gateway, *, question: str, answer: str, units: list[tuple[str, str]], round: int
) -> dict[str, tuple[str, str]]:
    """RevisEval judge mode: revise the answer against the units, then label each unit."""
    if not units:
        return {}
    revision = await revise_with_units(gateway, question=question, answer=answer, units=units, round=round)
    if not revision.ok:
        return {uid: ("unparseable", f"revision failed: {revision.error}") for uid, _ in units}
    return await label_units_with_revision(gateway, question=question, answer=answer, revised=revision.text,
                                           units=units, round=round)


async def geval_unit_verdicts(
    gateway: Gateway,
    *,
    question: str,
    answer: str,
    units: list[tuple[str, str]],
    round: int,
    n: int = DEFAULT_SAMPLES,
) -> dict[str, tuple[str, str]]:
    """G-Eval judge mode: one agreement score per unit, thresholded into a label."""
    if not units:
        return {}
    steps = await evaluation_steps(gateway, task=GEVAL_TASK, criterion=GEVAL_CRITERION)

    async def one(uid: str, text: str) -> tuple[str, tuple[str, str]]:
        messages = render("geval_unit", task=GEVAL_TASK, criterion=GEVAL_CRITERION, steps=steps,
                          question=question, unit=unit_block([(uid, text)]), answer=answer)
        scored = await form_fill(gateway, messages, scale=5, stage="exam_unit", n=n, round=round, unit_ids=(uid,))
        label = label_from_agreement(scored.score)
        if scored.score is None:
            reason = f"G-Eval: no usable score ({scored.n_unparseable} unparseable of {scored.n_samples})"
        else:
            reason = f"G-Eval agreement {scored.score:.2f} on 1-5 via {scored.path}"
        return uid, (label, reason)

    pairs = await asyncio.gather(*(one(uid, text) for uid, text in units))
    return dict(pairs)
