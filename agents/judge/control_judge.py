"""Judge role: whether a target's answer to a control question (a question the corpus cannot answer,
agents/examiner/control_writer.py) declined or corrected its premise, or took the premise for true and
answered. A judged label, never a phrase list: a refusal worded in an unexpected way, or an answer that
starts with "I am not sure" and then invents, is read as what it is. One judge call per answer, under the
ledger stage `control`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from examiner.agents.aliases import UnitAliases
from examiner.agents.card import AgentCard, Prompt
from examiner.agents.examiner.control_writer import CONTROL_STAGE
from examiner.agents.prompting.passing import passed
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig

ControlLabel = Literal["declined_or_corrected", "accepted_premise"]
CONTROL_LABELS: tuple[ControlLabel, ...] = ("declined_or_corrected", "accepted_premise")


class ControlVerdict(BaseModel):
    """The judge's label of one control answer, and a short reason."""

    label: ControlLabel
    reason: str = ""


def control_judge_tokens(n_units: int) -> int:
    """max_tokens of a control verdict: the label and a reason of at most 40 words."""
    return 100


CONTROL_JUDGE = Prompt.of("exam_control_judge", "question", "premise", "answer", "units",
                          generation=GenerationConfig(temperature=0.0), max_tokens=control_judge_tokens,
                          sized_by="number of units")
CARD = AgentCard(agent="judge", name="control judge", role="judge", prompts=(CONTROL_JUDGE,),
                 reply_schemas=(ControlVerdict,))


async def judge_control(gateway: Gateway, question: str, premise: str, answer: str, units: list[tuple[str, str]],
                        *, round: int) -> CallResult[ControlVerdict]:
    """The judge's label of `answer` to the control `question`, whose unsupported part is `premise`."""
    aliases = UnitAliases.of(units)
    messages = CONTROL_JUDGE.render(question=question, premise=premise, answer=passed(gateway, answer),
                                    units=aliases.block(units))
    return await gateway.chat(CARD.role, messages, CONTROL_JUDGE.config(len(units)),
                              CallContext(stage=CONTROL_STAGE, round=round, unit_ids=aliases.ids, hints=aliases.hint),
                              schema=ControlVerdict)
