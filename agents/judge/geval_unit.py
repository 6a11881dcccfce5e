"""G-Eval role as an exam judge: how far an answer agrees with one reference unit, on 1-5.

The evaluation steps are written once per gateway and endpoint (agents/judge/geval.py caches them); each unit
then gets one form-filling call (expected score from logprobs, else the mean of samples).
"""

from __future__ import annotations

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.judge.geval import DEFAULT_SAMPLES, FORM_GENERATION, ROLE, evaluation_steps, form_fill
from examiner.agents.judge.geval_math import GEvalScore
from examiner.agents.prompting import unit_block
from examiner.agents.prompting.geval_exam import AGREEMENT_SCALE, DECLINED, GEVAL_CRITERION, GEVAL_TASK
from examiner.llm import Gateway
from examiner.agents.prompting.passing import passed

AGREEMENT = Prompt.of("geval_unit", "task", "criterion", "steps", "question", "unit", "answer",
                      generation=FORM_GENERATION)
CARD = AgentCard(agent="judge", name="G-Eval unit agreement", role=ROLE, prompts=(AGREEMENT,),
                 text_reply="the 1-5 agreement token (0: the answer declines), read from its logprobs or from n samples "
                            "(agents/judge/geval_math.py); its steps come from G-Eval's geval_steps")


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
    """The agreement of `answer` with the reference `unit` (id, text): the form's 0-5 score, its
    probabilities per score (0: declined) beside it."""
    messages = AGREEMENT.render(task=GEVAL_TASK, criterion=GEVAL_CRITERION, steps=steps,
                                question=question, unit=unit_block([unit]), answer=passed(gw, answer))
    return await form_fill(gw, messages, scale=AGREEMENT_SCALE, stage="exam_unit", n=n, round=round,
                           unit_ids=(unit[0],), endpoint=endpoint, low=DECLINED)
