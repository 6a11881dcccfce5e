"""Examiner role: the same question in K other wordings, for the exam's wording check
(examiner/exam/nodes/rewording.py). One examiner call per question; the stage `rewording` keeps its cost
apart in the ledger."""

from __future__ import annotations

from pydantic import BaseModel, Field

from examiner.agents.card import AgentCard, Prompt
from examiner.core.stages import Stage
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig

REWORDING_STAGE = Stage.REWORDING.value
"""The ledger stage of every call the wording check makes (paraphrases, answers, judgments)."""


class Paraphrases(BaseModel):
    """The examiner's rewordings of one question, each asking exactly what it asks."""

    paraphrases: list[str] = Field(description="the question reworded, one string per wording")


def paraphrase_tokens(count: int) -> int:
    """max_tokens of a reply with `count` rewordings of a question of about 50 words."""
    return 40 + 110 * count


PARAPHRASE = Prompt.of("exam_paraphrase", "question", "count", generation=GenerationConfig(),
                       max_tokens=paraphrase_tokens, sized_by="number of paraphrases")
CARD = AgentCard(agent="examiner", name="paraphraser", role="examiner", prompts=(PARAPHRASE,),
                 reply_schemas=(Paraphrases,))


async def paraphrase(gateway: Gateway, question: str, *, count: int, round: int,
                     unit_ids: tuple[str, ...]) -> CallResult[Paraphrases]:
    """Ask the examiner for `count` rewordings of `question` (the count also goes as a hint, so a test
    backend need not read the prompt's prose)."""
    messages = PARAPHRASE.render(question=question, count=count)
    return await gateway.chat(CARD.role, messages, PARAPHRASE.config(count),
                              CallContext(stage=REWORDING_STAGE, round=round, unit_ids=unit_ids,
                                          hints={"count": count}),
                              schema=Paraphrases)
