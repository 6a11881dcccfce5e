"""Debater role (MDEval): an evaluator defends its own judgment in answer to the referee's question."""

from __future__ import annotations

from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.llm.gateway import ModelCallError
from examiner.core.assessments import Assessment, MetaItem, Turn
from examiner.core.labels import Unscored, call_failed
from examiner.agents.prompting.meta_blocks import assessment_text, item_block, transcript_text
from examiner.agents.prompting import render

STATEMENT_WORDS = 200


def statement_tokens(max_words: int) -> int:
    """max_tokens that enforces the word limit (about 1.4 tokens per English word, small margin)."""
    return int(max_words * 1.4) + 10


async def answer(gateway: Gateway, endpoint: str | None, item: MetaItem, side: str, own: Assessment,
                 other: Assessment, turns: list[Turn], question: str, *, round: int,
                 max_words: int = STATEMENT_WORDS) -> str | Unscored:
    """The debater's statement for this round (plain text), or Unscored when the call failed."""
    messages = render("debate_turn", item=item_block(item), side=side, own=assessment_text(own),
                      other=assessment_text(other), transcript=transcript_text(turns), question=question,
                      max_words=max_words)
    try:
        result = await gateway.chat(
            "debater", messages, GenerationConfig(max_tokens=statement_tokens(max_words)),
            CallContext(stage="debate", round=round, item_id=item.id,
                        hints={"side": side, "decision": own.decision, "max_words": max_words}),
            endpoint=endpoint,
        )
    except ModelCallError as exc:
        return call_failed(exc)
    return (result.text or "").strip()
