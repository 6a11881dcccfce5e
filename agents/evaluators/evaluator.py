"""Evaluator role (meta-evaluation step 1): one judge model's decision or score, with its explanation."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from examiner.llm import Gateway
from examiner.llm.gateway import ModelCallError
from examiner.llm.types import CallContext, GenerationConfig, Unparseable
from examiner.core.assessments import Assessment, MetaItem
from examiner.core.labels import Unscored, call_failed
from examiner.agents.prompting.meta_blocks import item_block
from examiner.agents.prompting import render

EXPLANATION_WORDS = 120


class PairwiseAssessment(BaseModel):
    explanation: str = Field(description="why, in at most 120 words")
    decision: Literal["Answer1", "Answer2", "tie"]


class VerdictAssessment(BaseModel):
    explanation: str = Field(description="why, in at most 120 words")
    decision: Literal["correct", "incorrect", "unrelated"]


class ScoreAssessment(BaseModel):
    explanation: str = Field(description="why, in at most 120 words")
    score: int = Field(ge=1, le=5)


_PROMPT = {"pairwise": "evaluator_pairwise", "individual": "evaluator_individual", "verdict": "evaluator_verdict"}
_SCHEMA: dict[str, type[BaseModel]] = {
    "pairwise": PairwiseAssessment, "individual": ScoreAssessment, "verdict": VerdictAssessment,
}


async def assess(gateway: Gateway, endpoint: str, item: MetaItem, *, max_words: int = EXPLANATION_WORDS) -> Assessment:
    """Ask evaluator `endpoint` for its judgment of `item`; unparseable or failed calls are marked, never guessed."""
    messages = render(_PROMPT[item.kind], item=item_block(item), max_words=max_words)
    try:
        result = await gateway.chat(
            "evaluator", messages, GenerationConfig(max_tokens=int(max_words * 2) + 60),
            CallContext(stage=f"assess_{item.kind}", item_id=item.id), schema=_SCHEMA[item.kind], endpoint=endpoint,
        )
    except ModelCallError as exc:
        return Assessment(item_id=item.id, evaluator=endpoint, unscored=call_failed(exc))
    parsed = result.parsed
    if isinstance(parsed, Unparseable):
        return Assessment(item_id=item.id, evaluator=endpoint, unscored=Unscored(parsed.error),
                          explanation=result.text[:2000])
    if isinstance(parsed, ScoreAssessment):
        return Assessment(item_id=item.id, evaluator=endpoint, score=float(parsed.score), explanation=parsed.explanation)
    return Assessment(item_id=item.id, evaluator=endpoint, decision=parsed.decision, explanation=parsed.explanation)
