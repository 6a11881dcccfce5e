"""Judge role: label each target knowledge unit correct / incorrect / unrelated against its reference."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Literal, Protocol

from pydantic import BaseModel, Field, create_model

from examiner.core.contract import Mark
from examiner.core.labels import Verdict, verdict_from_text
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig
from examiner.prompting import render
from examiner.roles.aliases import UnitAliases

Label = Literal["correct", "incorrect", "unrelated"]

REASON_WORDS: dict[str, int] = {"incorrect": 100}
"""The reason policy of prompts/exam_judge.md: the most words of a reason per label; a label not named
gets no reason (Ref-Eval counts labels; only an error needs explaining, and reports show reasons only for
units answered wrong). The prompt states it and the call's hints carry it (`reason_words`), so a
simulated judge writes what the prompt asks for."""


class UnitVerdict(BaseModel):
    """The judge's label for one knowledge unit."""

    unit_id: str
    type: Label
    reason: str = Field(description="for incorrect only: the error and the correct statement; else empty")


class Judgment(BaseModel):
    """One verdict per unit shown to the judge."""

    verdicts: list[UnitVerdict]


class AnswerVerdict(BaseModel):
    """A single label for the whole answer (the judge-without-reference baseline)."""

    type: Label
    reason: str


class LabelledUnit(Protocol):
    """A per-unit verdict as any judge reply schema spells it."""

    unit_id: str
    type: str
    reason: str


def marks_from_verdicts(verdicts: Iterable[LabelledUnit]) -> dict[str, Mark[Verdict]]:
    """A mark per unit id the judge named (its first verdict wins when it names a unit twice)."""
    marks: dict[str, Mark[Verdict]] = {}
    for verdict in verdicts:
        marks.setdefault(verdict.unit_id, Mark(verdict_from_text(verdict.type), verdict.reason))
    return marks


def judgment_schema(unit_ids: list[str]) -> type[Judgment]:
    """Judgment with exactly one verdict per shown unit, each naming one of these ids."""
    ids = Literal.__getitem__(tuple(unit_ids))  # type: ignore[attr-defined]
    verdict = create_model("UnitVerdict", __base__=UnitVerdict, unit_id=(ids, ...))  # type: ignore[call-overload]
    return create_model(  # type: ignore[call-overload, no-any-return]
        "Judgment", __base__=Judgment,
        verdicts=(list[verdict], Field(min_length=len(unit_ids), max_length=len(unit_ids))),
    )


async def judge_units(
    gateway: Gateway,
    question: str,
    answer: str,
    references: list[tuple[str, str]],
    *,
    round: int,
    stage: str = "judge",
    endpoint: str | None = None,
) -> CallResult[Judgment]:
    """Per-unit verdicts; `references` pairs each unit id with the text it is checked against. The judge
    sees and names the units by short names; the verdicts come back with unit ids."""
    aliases = UnitAliases.of(references)
    messages = render("exam_judge", question=question, answer=answer, units=aliases.block(references),
                      incorrect_words=REASON_WORDS["incorrect"])
    result = await gateway.chat(
        "judge", messages, GenerationConfig(max_tokens=120 + 160 * len(references)),
        CallContext(stage=stage, round=round, unit_ids=aliases.ids,
                    hints={"reason_words": REASON_WORDS, **aliases.hint}),
        schema=Judgment, response_schema=judgment_schema(aliases.names), endpoint=endpoint,
    )
    if not isinstance(result.parsed, Judgment):
        return result
    verdicts = [v.model_copy(update={"unit_id": aliases.unit_id(v.unit_id)}) for v in result.parsed.verdicts]
    return replace(result, parsed=Judgment(verdicts=verdicts))


async def judge_without_reference(
    gateway: Gateway, question: str, answer: str, *, round: int, unit_ids: list[str], endpoint: str | None = None
) -> CallResult[AnswerVerdict]:
    """One verdict for the answer from the judge's own knowledge (no reference text shown)."""
    messages = render("exam_judge_noref", question=question, answer=answer)
    return await gateway.chat(
        "judge", messages, GenerationConfig(max_tokens=200),
        CallContext(stage="judge_noref", round=round, unit_ids=tuple(unit_ids)), schema=AnswerVerdict, endpoint=endpoint,
    )
