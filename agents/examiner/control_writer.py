"""Examiner role: a control question the corpus cannot answer, written from one cluster's units, for the
exam's control questions (examiner/exam/nodes/controls.py). The right answer to it is to decline or to
correct its premise; one examiner call per control, under the ledger stage `control`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from examiner.agents.aliases import UnitAliases
from examiner.agents.card import AgentCard, Prompt
from examiner.core.stages import Stage
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig

CONTROL_STAGE = Stage.CONTROL.value
"""The ledger stage of every call the control questions make (writing, answering, judging)."""

ControlKind = Literal["false_premise", "swapped_entity", "out_of_corpus"]
CONTROL_KINDS: tuple[ControlKind, ...] = ("false_premise", "swapped_entity", "out_of_corpus")


class ControlQuestion(BaseModel):
    """A question the units do not support, and what in it is unsupported (what the judge checks for)."""

    question: str = Field(description="the control question put to the interviewee")
    premise: str = Field(description="the claim or detail in the question that the units do not support")


def control_tokens(n_units: int) -> int:
    """max_tokens of a control: a ~50-word question and a one-sentence premise (units only shown)."""
    return 200


CONTROL = Prompt.of("exam_control", "units", "kind", "max_words", generation=GenerationConfig(),
                    max_tokens=control_tokens, sized_by="number of units")
CARD = AgentCard(agent="examiner", name="control writer", role="examiner", prompts=(CONTROL,),
                 reply_schemas=(ControlQuestion,))

KIND_WORDS = {
    "false_premise": "a FALSE PREMISE: the question takes for granted a claim that contradicts the units",
    "swapped_entity": "a SWAPPED ENTITY: the question asks about a person, place, product or number the units "
                      "never mention, put where the units' own one stands",
    "out_of_corpus": "an OUT-OF-CORPUS DETAIL: the question asks for a specific detail the units do not give",
}
"""How the prompt names each kind of control (the kind itself also goes as a hint)."""


async def write_control(gateway: Gateway, units: list[tuple[str, str]], kind: ControlKind, *, round: int,
                        max_words: int = 50) -> CallResult[ControlQuestion]:
    """Ask the examiner for one control question of `kind` on `units` (`units[0]` the cluster's centre)."""
    aliases = UnitAliases.of(units)
    messages = CONTROL.render(units=aliases.block(units), kind=KIND_WORDS[kind], max_words=max_words)
    return await gateway.chat(CARD.role, messages, CONTROL.config(len(units)),
                              CallContext(stage=CONTROL_STAGE, round=round, unit_ids=aliases.ids,
                                          hints={**aliases.hint, "control_kind": kind}),
                              schema=ControlQuestion)
