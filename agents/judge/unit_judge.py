"""Judge role: label each target knowledge unit correct / incorrect / unrelated / abstained against its reference."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, create_model

from examiner.agents.aliases import UnitAliases
from examiner.agents.card import AgentCard, Prompt
from examiner.agents.choices import list_of, one_of
from examiner.agents.judge.label_confidence import label_confidences
from examiner.core.contract import Mark
from examiner.core.labels import Verdict, verdict_from_text
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig
from examiner.llm.structured import parse_structured
from examiner.agents.prompting.fence import Markup, line_element, lines
from examiner.agents.prompting.passing import passed

Label = Literal["correct", "incorrect", "unrelated", "abstained"]

REASON_WORDS: dict[str, int] = {"incorrect": 40}
"""The reason policy of prompts/exam_judge.md: the most words of a reason per label; a label not named
gets no reason (Ref-Eval counts labels; only an error needs explaining, and reports show reasons only for
units answered wrong). 40 words hold the answer's wrong statement and the unit's correct one, which is
all docs/METHODS.md asks of a reason (under 100 words). The prompt states it and the call's hints carry it
(`reason_words`), so a simulated judge writes what the prompt asks for."""


class UnitVerdict(BaseModel):
    """The judge's label for one knowledge unit, with its reason (empty unless incorrect)."""

    unit_id: str
    type: Label
    reason: str = ""


class UnitReason(BaseModel):
    """Why one unit is incorrect: the error in the answer and the correct statement."""

    unit: str
    reason: str


class Judgment(BaseModel):
    """A label per unit shown to the judge, by its name in the call, and reasons for the incorrect ones.

    A label map rather than a list of {unit_id, type, reason} objects: each unit costs its name and label
    (~5 tokens) instead of ~20 tokens of keys, quotes and an empty reason."""

    labels: dict[str, Label]
    reasons: list[UnitReason] = Field(default_factory=list)

    @property
    def verdicts(self) -> list[UnitVerdict]:
        """The labels as per-unit verdicts, in the reply's order (a unit's first reason wins)."""
        why: dict[str, str] = {}
        for item in self.reasons:
            why.setdefault(item.unit, item.reason)
        return [UnitVerdict(unit_id=uid, type=label, reason=why.get(uid, "")) for uid, label in self.labels.items()]


class AnswerVerdict(BaseModel):
    """A single label for the whole answer (the judge-without-reference baseline)."""

    type: Label
    reason: str


class LabelledUnit(Protocol):
    """A per-unit verdict as any judge reply schema spells it (read-only: a pydantic field satisfies it)."""

    @property
    def unit_id(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def reason(self) -> str: ...


def marks_from_verdicts(verdicts: Iterable[LabelledUnit]) -> dict[str, Mark[Verdict]]:
    """A mark per unit id the judge named (its first verdict wins when it names a unit twice)."""
    marks: dict[str, Mark[Verdict]] = {}
    for verdict in verdicts:
        marks.setdefault(verdict.unit_id, Mark(verdict_from_text(verdict.type), verdict.reason))
    return marks


def judgment_schema(names: Sequence[str]) -> type[BaseModel]:
    """What the endpoint is asked to follow: a label for exactly these names, reasons naming only them.
    Calls name U1..Uk, so a run needs one schema per cluster size: built once, not once per call (building
    a pydantic model was a tenth of an exam's own CPU)."""
    return _judgment_schema(tuple(names))


@lru_cache(maxsize=256)
def _judgment_schema(names: tuple[str, ...]) -> type[BaseModel]:
    # One field per name, so the fields go in as **kwargs; mypy checks such a dict against every keyword of
    # create_model (__doc__, __module__, ...), not only against its **field_definitions (pydantic's stub gap).
    labels = create_model("Labels", __config__=ConfigDict(extra="forbid"),  # type: ignore[call-overload]
                          **{name: (Label, ...) for name in names})
    reason = create_model("UnitReason", __base__=UnitReason, unit=(one_of(names), ...))
    return create_model("Judgment", labels=(labels, ...), reasons=(list_of(reason), ...))


def reply_limit(units: int) -> int:
    """max_tokens of a judgment about `units` units (a label map, and reasons for incorrect units)."""
    return 120 + 160 * units


JUDGE = Prompt.of("exam_judge", "question", "answer", "units", "incorrect_words", generation=GenerationConfig(),
                  max_tokens=reply_limit, sized_by="number of units")
JUDGE_PASSAGES = Prompt.of("exam_judge_passages", "question", "answer", "units", "passages", "incorrect_words",
                           generation=GenerationConfig(), max_tokens=reply_limit, sized_by="number of units")
"""The Ref-Eval judge's prompt with each unit's source passage below the units: what a judge cascade's cheap
tier is sent when its settings say it reads passages (`cheap_passages`), e.g. the encoder student taught
on an exam (docs/DISTIL.md 5c). The strong judge's prompt is JUDGE, unchanged."""
JUDGE_NOREF = Prompt.of("exam_judge_noref", "question", "answer", generation=GenerationConfig(max_tokens=200))
CARD = AgentCard(agent="judge", name="unit judge", role="judge", prompts=(JUDGE, JUDGE_PASSAGES, JUDGE_NOREF),
                 reply_schemas=(Judgment, AnswerVerdict))


def passage_name(unit_name: str) -> str:
    """The passage line's name for a unit's short name: `S3` for `U3`."""
    return "S" + unit_name[1:]


def passage_block(aliases: UnitAliases, passages: Mapping[str, str]) -> Markup:
    """Each unit's source passage as one `<S1>text` line (fence.line_element: escaped and on one line, so
    a passage can neither end its line, name a unit nor close the block), in the units' order; a unit
    whose passage is unknown gets an empty line."""
    return lines(line_element(passage_name(name), passages.get(uid, "")) for uid, name in zip(aliases.ids, aliases.names))


def judge_messages(question: str, answer: str, references: Sequence[tuple[str, str]],
                   passages: Mapping[str, str] | None = None) -> tuple[list[dict[str, str]], UnitAliases]:
    """The Ref-Eval judge's messages for `references` (unit id, text) under short names, with each unit's
    source passage (by unit id) when `passages` is given (JUDGE_PASSAGES), and the names' aliases. The one
    way both the exam and `examiner distil` write the prompt, so a student is taught what it is sent."""
    aliases = UnitAliases.of(references)
    units = aliases.block(references)
    if passages is None:
        return JUDGE.render(question=question, answer=answer, units=units,
                            incorrect_words=REASON_WORDS["incorrect"]), aliases
    return JUDGE_PASSAGES.render(question=question, answer=answer, units=units,
                                 passages=passage_block(aliases, passages),
                                 incorrect_words=REASON_WORDS["incorrect"]), aliases


def _by_unit_id(parsed: Judgment, aliases: UnitAliases) -> Judgment:
    """A judgment that names units by the call's short names, keyed by unit id instead."""
    return Judgment(
        labels={aliases.unit_id(name): label for name, label in parsed.labels.items()},
        reasons=[UnitReason(unit=aliases.unit_id(r.unit), reason=r.reason) for r in parsed.reasons],
    )


async def _judge_call(gateway: Gateway, question: str, answer: str, references: list[tuple[str, str]],
                      config: GenerationConfig, *, round: int, stage: str, endpoint: str | None,
                      passages: Mapping[str, str] | None = None) -> tuple[CallResult[Judgment], UnitAliases]:
    """One call of the Ref-Eval judge's prompt with `config` (the units under short names; their source
    passages too when `passages` is given) and the aliases that map its names back to unit ids: what every
    way of asking the judge shares."""
    messages, aliases = judge_messages(question, passed(gateway, answer), references, passages)
    result = await gateway.chat(
        CARD.role, messages, config,
        CallContext(stage=stage, round=round, unit_ids=aliases.ids,
                    hints={"reason_words": REASON_WORDS, **aliases.hint}),
        schema=Judgment, response_schema=judgment_schema(aliases.names), endpoint=endpoint,
    )
    return result, aliases


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
    result, aliases = await _judge_call(gateway, question, answer, references, JUDGE.config(len(references)),
                                        round=round, stage=stage, endpoint=endpoint)
    if not isinstance(result.parsed, Judgment):
        return result
    return replace(result, parsed=_by_unit_id(result.parsed, aliases))


async def judge_without_reference(
    gateway: Gateway, question: str, answer: str, *, round: int, unit_ids: list[str], endpoint: str | None = None
) -> CallResult[AnswerVerdict]:
    """One verdict for the answer from the judge's own knowledge (no reference text shown)."""
    return await gateway.chat(
        CARD.role, JUDGE_NOREF.render(question=question, answer=passed(gateway, answer)), JUDGE_NOREF.config(),
        CallContext(stage="judge_noref", round=round, unit_ids=tuple(unit_ids)), schema=AnswerVerdict, endpoint=endpoint,
    )


async def sample_judgments(
    gateway: Gateway,
    question: str,
    answer: str,
    references: list[tuple[str, str]],
    *,
    round: int,
    samples: int,
    temperature: float,
    stage: str = "judge_cascade",
    endpoint: str | None = None,
    passages: Mapping[str, str] | None = None,
) -> list[Judgment | None]:
    """`samples` judgments of one answer, drawn in one request of `samples` choices at `temperature`
    (the prompt of `judge_units`), each keyed by unit id; None for a choice that does not parse. A judge
    cascade reads how often the samples agree as the judge's confidence."""
    config = replace(JUDGE.config(len(references)), n=samples, temperature=temperature)
    result, aliases = await _judge_call(gateway, question, answer, references, config, round=round, stage=stage,
                                        endpoint=endpoint, passages=passages)
    choices: list[Judgment | None] = []
    for text in result.texts or [result.text]:
        parsed, _ = parse_structured(text, Judgment)
        choices.append(_by_unit_id(parsed, aliases) if isinstance(parsed, Judgment) else None)
    return choices


async def judge_with_confidence(
    gateway: Gateway,
    question: str,
    answer: str,
    references: list[tuple[str, str]],
    *,
    round: int,
    stage: str = "judge_cascade",
    endpoint: str | None = None,
    passages: Mapping[str, str] | None = None,
) -> tuple[Judgment | None, dict[str, float | None]]:
    """One greedy judgment of an answer (the prompt of `judge_units`) with the log-probabilities of its
    reply, and per unit id how sure the judge was of its label (agents/judge/label_confidence.py; None
    where the endpoint gave no logprobs or the label cannot be read). A judge cascade's cheaper path to a
    confidence than `sample_judgments`."""
    config = replace(JUDGE.config(len(references)), temperature=0.0, logprobs=True)
    result, aliases = await _judge_call(gateway, question, answer, references, config, round=round, stage=stage,
                                        endpoint=endpoint, passages=passages)
    confidences = label_confidences(result.logprobs, aliases.names)
    by_id = {aliases.unit_id(name): p for name, p in confidences.items()}
    if not isinstance(result.parsed, Judgment):
        return None, by_id
    return _by_unit_id(result.parsed, aliases), by_id
