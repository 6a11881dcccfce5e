"""Checker role: reads one question against its cluster's units alone and says whether the units answer
it, which claimed units support it (with a quote the gate matches back to the unit), and whether a guess
made without the units is right. One judge-role call per question."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel, Field

from examiner.agents.aliases import UnitAliases
from examiner.agents.card import AgentCard, Prompt
from examiner.agents.gate.guesser import GATE_STAGE
from examiner.agents.prompting.passing import passed
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig


class UnitSupport(BaseModel):
    """Whether one claimed unit holds part of the answer, and the words of it that do."""

    unit: str
    supported: bool
    quote: str = ""


class GateCheck(BaseModel):
    """The checker's reply (unit names come back as unit ids)."""

    answerable: bool
    support: list[UnitSupport] = Field(default_factory=list)
    guess_correct: bool = False
    reason: str = ""


def check_tokens(n_targets: int) -> int:
    """max_tokens of a check: flags and a reason, and a quote of up to 25 words per claimed unit."""
    return 120 + 60 * n_targets


CHECK = Prompt.of("gate_check", "question", "targets", "units", "guess", generation=GenerationConfig(temperature=0.0),
                  max_tokens=check_tokens, sized_by="number of claimed units")
CARD = AgentCard(agent="gate", name="question checker", role="judge", prompts=(CHECK,), reply_schemas=(GateCheck,))


async def check_question(gateway: Gateway, question: str, units: Sequence[tuple[str, str]], targets: Sequence[str],
                         guess: str, *, round: int, attempt: int = 0) -> CallResult[GateCheck]:
    """The checker's reading of `question` against `units` (the cluster's, `units[0]` its centre), for the
    unit ids it claims (`targets`) and a guess made without the units (`attempt`: 1 for a rewritten
    question, a hint for a test backend)."""
    aliases = UnitAliases.of(list(units))
    names = [aliases.names[aliases.ids.index(uid)] for uid in targets if uid in aliases.ids]
    messages = CHECK.render(question=question, targets=", ".join(names), units=aliases.block(list(units)),
                            guess=passed(gateway, guess))
    result = await gateway.chat(CARD.role, messages, CHECK.config(len(names)),
                                CallContext(stage=GATE_STAGE, round=round, unit_ids=aliases.ids, hints={**aliases.hint, "gate_attempt": attempt}),
                                schema=GateCheck)
    if not isinstance(result.parsed, GateCheck):
        return result
    support = [s.model_copy(update={"unit": aliases.unit_id(s.unit)}) for s in result.parsed.support]
    return replace(result, parsed=result.parsed.model_copy(update={"support": support}))
