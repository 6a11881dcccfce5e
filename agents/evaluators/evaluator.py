"""Evaluator role (meta-evaluation step 1): one judge model's decision or score, with its explanation."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.prompting.meta_blocks import item_block
from examiner.core.assessments import Assessment, MetaItem
from examiner.core.labels import Unscored, call_failed
from examiner.llm import CallContext, Gateway, GenerationConfig, ModelCallError, Unparseable

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


def assessment_tokens(max_words: int) -> int:
    """max_tokens of an assessment: the explanation (about 2 tokens a word) and the JSON around it."""
    return int(max_words * 2) + 60


def _prompt(file: str) -> Prompt:
    return Prompt.of(file, "item", "max_words", generation=GenerationConfig(), max_tokens=assessment_tokens,
                     sized_by="explanation's word limit")


PROMPTS = {"pairwise": _prompt("evaluator_pairwise"), "individual": _prompt("evaluator_individual"),
           "verdict": _prompt("evaluator_verdict")}
"""The prompt per item kind."""
SCHEMAS: dict[str, type[PairwiseAssessment | ScoreAssessment | VerdictAssessment]] = {
    "pairwise": PairwiseAssessment, "individual": ScoreAssessment, "verdict": VerdictAssessment,
}
"""The reply schema per item kind."""
CARD = AgentCard(agent="evaluators", name="evaluator", role="evaluator", prompts=tuple(PROMPTS.values()),
                 reply_schemas=tuple(SCHEMAS.values()))


async def assess(gateway: Gateway, endpoint: str, item: MetaItem, *, max_words: int = EXPLANATION_WORDS) -> Assessment:
    """Ask evaluator `endpoint` for its judgment of `item`; unparseable or failed calls are marked, never guessed."""
    prompt = PROMPTS[item.kind]
    cap = gateway.settings.max_passed_chars  # what models wrote goes in cut to this (core/passed_text.py)
    messages = prompt.render(item=item_block(item, limit=cap), max_words=max_words)
    try:
        result = await gateway.chat(
            CARD.role, messages, prompt.config(max_words),
            CallContext(stage=f"assess_{item.kind}", item_id=item.id), schema=SCHEMAS[item.kind], endpoint=endpoint,
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
