"""Guesser role: answers an exam question with no corpus at all, so the gate can tell a question that
tests the corpus from one any model answers from general knowledge (a "guessable" question)."""

from __future__ import annotations

from examiner.agents.card import AgentCard, Prompt
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig

GATE_STAGE = "question_gate"
"""The ledger stage of every gate call (its cost is its own line in the ledger and the estimate)."""


def guess_tokens(max_words: int) -> int:
    """max_tokens of a guess: a little above its word limit (about 1.6 tokens a word, and a margin)."""
    return int(max_words * 1.6) + 16


GUESS = Prompt.of("gate_guess", "question", "max_words", generation=GenerationConfig(temperature=0.0),
                  max_tokens=guess_tokens, sized_by="word limit")
CARD = AgentCard(agent="gate", name="question guesser", role="examiner", prompts=(GUESS,),
                 text_reply="the guess as written, one short paragraph")


async def guess_answer(gateway: Gateway, question: str, *, round: int, unit_ids: tuple[str, ...],
                       endpoint: str | None = None, max_words: int = 60, attempt: int = 0) -> CallResult[str]:
    """A cheap model's answer to `question` without any passage (`endpoint`: the gate's guesser, else the
    examiner role's endpoint; `attempt`: 1 for a rewritten question, a hint for a test backend)."""
    return await gateway.chat(CARD.role, GUESS.render(question=question, max_words=max_words), GUESS.config(max_words),
                              CallContext(stage=GATE_STAGE, round=round, unit_ids=unit_ids,
                                                          hints={"gate_attempt": attempt}), endpoint=endpoint or None)
