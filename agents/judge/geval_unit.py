"""G-Eval role as an exam judge: how far an answer agrees with one reference unit, on 1-5.

The evaluation steps are written once per gateway and endpoint (roles/geval.py caches them); each unit
then gets one form-filling call (expected score from logprobs, else the mean of samples).
"""

from __future__ import annotations

from examiner.llm.gateway import Gateway
from examiner.agents.prompting import render, unit_block
from examiner.agents.prompting.geval_exam import AGREEMENT_SCALE, GEVAL_CRITERION, GEVAL_TASK
from examiner.agents.judge.geval import DEFAULT_SAMPLES, evaluation_steps, form_fill
from examiner.agents.judge.geval_math import GEvalScore


async def agreement_steps(gw: Gateway, *, endpoint: str | None = None) -> str:
    """The evaluation steps for the agreement criterion (written by the model once, then reused)."""
    return await evaluation_steps(gw, task=GEVAL_TASK, criterion=GEVAL_CRITERION, endpoint=endpoint)


async def unit_agreement(
    gw: Gateway,
    *,
    steps: str,
    question: str,
    answer: str,
    unit: tuple[str, str],
    round: int,
    n: int = DEFAULT_SAMPLES,
    endpoint: str | None = None,
) -> GEvalScore:
    """The expected 1-5 agreement of `answer` with the reference `unit` (id, text)."""
    messages = render("geval_unit", task=GEVAL_TASK, criterion=GEVAL_CRITERION, steps=steps,
                      question=question, unit=unit_block([unit]), answer=answer)
    return await form_fill(gw, messages, scale=AGREEMENT_SCALE, stage="exam_unit", n=n, round=round,
                           unit_ids=(unit[0],), endpoint=endpoint)
