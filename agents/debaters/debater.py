"""Debater role (MDEval): an evaluator defends its own judgment in answer to the referee's question."""

from __future__ import annotations

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.prompting.meta_blocks import assessment_text, item_block, transcript_text
from examiner.core.assessments import Assessment, MetaItem, Turn
from examiner.core.labels import Unscored, call_failed
from examiner.core.passed_text import cut_passed
from examiner.llm import CallContext, Gateway, GenerationConfig, ModelCallError

STATEMENT_WORDS = 200


def statement_tokens(max_words: int) -> int:
    """max_tokens that enforces the word limit (about 1.4 tokens per English word, small margin)."""
    return int(max_words * 1.4) + 10


TURN = Prompt.of("debate_turn", "item", "side", "own", "other", "transcript", "question", "max_words",
                 generation=GenerationConfig(), max_tokens=statement_tokens, sized_by="word limit")
CARD = AgentCard(agent="debaters", name="debater", role="debater", prompts=(TURN,),
                 text_reply="the statement as written")


async def answer(gateway: Gateway, endpoint: str | None, item: MetaItem, side: str, own: Assessment,
                 other: Assessment, turns: list[Turn], question: str, *, round: int,
                 max_words: int = STATEMENT_WORDS) -> str | Unscored:
    """The debater's statement for this round (plain text), or Unscored when the call failed."""
    cap = gateway.settings.max_passed_chars  # what models wrote goes in cut to this (core/passed_text.py)
    messages = TURN.render(item=item_block(item, limit=cap), side=side, own=assessment_text(own, limit=cap),
                           other=assessment_text(other, limit=cap), transcript=transcript_text(turns, limit=cap),
                           question=cut_passed(question, cap), max_words=max_words)
    try:
        result = await gateway.chat(
            CARD.role, messages, TURN.config(max_words),
            CallContext(stage="debate", round=round, item_id=item.id,
                        hints={"side": side, "decision": own.decision, "max_words": max_words}),
            endpoint=endpoint,
        )
    except ModelCallError as exc:
        return call_failed(exc)
    return (result.text or "").strip()
