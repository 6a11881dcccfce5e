"""Referee role (MDEval): one turn of a debate between two evaluators, a question to both or the verdict.

The referee answers on the meta-judge's endpoint (gateway role `meta_judge`): it is the meta-judge of
the debate method, given turns instead of one reply.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.meta_reply import REASONING_WORDS, reasoning_tokens, schema_reply
from examiner.agents.prompting.meta_blocks import assessments_block, item_block, transcript_text
from examiner.core.assessments import Assessment, MetaItem, Turn
from examiner.core.labels import Unscored
from examiner.llm import CallContext, Gateway, GenerationConfig

ROLE = "meta_judge"
AssistantLabel = Literal["Assistant1", "Assistant2", "equally good"]


class RefereeTurn(BaseModel):
    """A referee turn: end the debate with a verdict, or ask both debaters one question."""

    reasoning: str = Field(description="under 100 words")
    action: Literal["verdict", "question"]
    question: str = ""
    better_answer: str = ""
    verdict: AssistantLabel | None = None

    @model_validator(mode="after")
    def _complete(self) -> RefereeTurn:
        if self.action == "question" and not self.question.strip():
            raise ValueError("action 'question' needs a non-empty question")
        if self.action == "verdict" and self.verdict is None:
            raise ValueError("action 'verdict' needs verdict Assistant1, Assistant2 or equally good")
        return self


class RefereeVerdict(BaseModel):
    """The forced last turn: a verdict only."""

    reasoning: str = Field(description="under 100 words")
    better_answer: str = ""
    verdict: AssistantLabel


TURN = Prompt.of("meta_referee", "item", "assessments", "transcript", "round", "max_rounds", "round_note",
                 "max_words", generation=GenerationConfig(), max_tokens=lambda words: reasoning_tokens(2 * words),
                 sized_by="reasoning's word limit")
CARD = AgentCard(agent="referee", name="debate referee", role=ROLE, prompts=(TURN,),
                 reply_schemas=(RefereeTurn, RefereeVerdict))


async def referee(gateway: Gateway, item: MetaItem, a1: Assessment, a2: Assessment, turns: list[Turn], *,
                  round: int, max_rounds: int, endpoint: str | None = None,
                  max_words: int = REASONING_WORDS) -> RefereeTurn | RefereeVerdict | Unscored:
    """One referee turn; in the last round only a verdict is accepted. Unscored when unreadable."""
    forced = round >= max_rounds
    note = ("This is the last round: give your verdict now (action 'verdict')." if forced
            else "Give your verdict now, or ask one question to both assistants.")
    cap = gateway.settings.max_passed_chars  # what models wrote goes in cut to this (core/passed_text.py)
    messages = TURN.render(item=item_block(item, limit=cap), assessments=assessments_block(a1, a2, limit=cap),
                           transcript=transcript_text(turns, limit=cap), round=round, max_rounds=max_rounds, round_note=note,
                           max_words=max_words)
    schema: type[RefereeTurn | RefereeVerdict] = RefereeVerdict if forced else RefereeTurn
    return await schema_reply(gateway, CARD.role, messages, TURN.config(max_words),
                              CallContext(stage="referee", round=round, item_id=item.id,
                                          hints={"max_rounds": max_rounds}),
                              schema, endpoint)


__all__ = ["CARD", "REASONING_WORDS", "RefereeTurn", "RefereeVerdict", "referee"]
