"""Examiner role: one question per cluster of knowledge units, and narrower follow-up probes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from pydantic import BaseModel, Field, create_model

from examiner.agents.aliases import UnitAliases
from examiner.agents.card import AgentCard, Prompt
from examiner.agents.choices import list_of, one_of
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig
from examiner.agents.prompting.passing import passed


class Question(BaseModel):
    """The examiner's question and the ids of the units it asks about."""

    question: str = Field(description="the question put to the interviewee")
    target: list[str] = Field(description="ids of the knowledge units the question covers")


def question_tokens(n_units: int) -> int:
    """Completion budget: a ~50-word question plus up to n targets (sized when targets were ~10-token
    ids; names need less, and a generous cap costs nothing but a larger worst case for the budget)."""
    return 160 + 24 * n_units


QUESTION = Prompt.of("exam_question", "units", "max_words", "feedback", generation=GenerationConfig(),
                     max_tokens=question_tokens, sized_by="number of units")
PROBE = Prompt.of("exam_probe", "question", "answer", "units", "max_words", generation=GenerationConfig(),
                  max_tokens=question_tokens, sized_by="number of units")
CARD = AgentCard(agent="examiner", name="question writer", role="examiner", prompts=(QUESTION, PROBE),
                 reply_schemas=(Question,))


def question_schema(unit_ids: Sequence[str]) -> type[Question]:
    """Question whose `target` may only name these ids: endpoints that enforce schemas (OpenAI structured
    outputs, llama.cpp grammars) then cannot emit an id from outside the cluster. Built once per distinct
    list of names (U1..Uk: one per cluster size), not once per call."""
    return _question_schema(tuple(unit_ids))


@lru_cache(maxsize=256)
def _question_schema(unit_ids: tuple[str, ...]) -> type[Question]:
    return create_model("Question", __base__=Question,
                        target=(list_of(one_of(unit_ids)), Field(min_length=1, max_length=len(unit_ids))))


async def write_question(
    gateway: Gateway,
    units: list[tuple[str, str]],
    *,
    round: int,
    max_words: int = 50,
    feedback: str = "",
    gate_attempt: int = 0,
) -> CallResult[Question]:
    """Ask the examiner for one question over a cluster (`units[0]` is the cluster's center); `gate_attempt`
    1 marks the question gate's rewrite (a hint for a test backend, examiner/exam/gate/)."""
    aliases = UnitAliases.of(units)
    note = f"\nYour previous attempt was rejected: {aliases.shorten(feedback)}\n" if feedback else ""
    messages = QUESTION.render(units=aliases.block(units), max_words=max_words, feedback=note)
    hints = {**aliases.hint, "gate_attempt": gate_attempt} if gate_attempt else aliases.hint
    return await _ask(gateway, QUESTION, messages, aliases, CallContext(stage="question", round=round, unit_ids=aliases.ids,
                                                              hints=hints))


async def write_probe(
    gateway: Gateway,
    question: str,
    answer: str,
    units: list[tuple[str, str]],
    *,
    round: int,
    max_words: int = 50,
) -> CallResult[Question]:
    """Ask for a narrower follow-up on the units an answer left uncovered."""
    aliases = UnitAliases.of(units)
    messages = PROBE.render(question=question, answer=passed(gateway, answer), units=aliases.block(units),
                             max_words=max_words)
    return await _ask(gateway, PROBE, messages, aliases, CallContext(stage="probe", round=round, unit_ids=aliases.ids,
                                                              hints=aliases.hint))


async def _ask(gateway: Gateway, prompt: Prompt, messages: list[dict[str, str]], aliases: UnitAliases,
               context: CallContext) -> CallResult[Question]:
    """One examiner call over units shown by their short names; the reply's targets come back as unit ids."""
    result = await gateway.chat(
        CARD.role, messages, prompt.config(len(aliases.ids)), context,
        schema=Question, response_schema=question_schema(aliases.names),
    )
    if not isinstance(result.parsed, Question):
        return result
    targets = [aliases.unit_id(name) for name in result.parsed.target]
    return replace(result, parsed=result.parsed.model_copy(update={"target": targets}))
