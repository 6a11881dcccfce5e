"""Records of a meta-evaluation run: items, evaluator assessments, meta-judgments, debates.

Three item kinds share one record so every stage handles them alike:
- `pairwise`: instruction + two outputs, a decision is a `Preference` (docs/METHODS.md section 5);
- `individual`: a text with a gold human score (1-5 scale by default);
- `verdict`: an exam triple (question, answer, reference unit), a decision is a `Verdict`.
A meta-judge's choice between two evaluators (JDEval's better assistant, a debate's verdict, a match
outcome) is a `Preference` too: FIRST = the evaluator shown first. Labels are written in the one
vocabulary (examiner.core.labels); records written by earlier versions (Answer1, Assistant2, a/b/tie)
are read back through its converters. Every record is one JSONL line in the run directory; files are
append-only and read back keyed by id, which is what makes a run resumable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer, model_validator

from examiner.core.labels import CALL_FAILED, Preference, Unscored, Verdict, preference_from_text, verdict_from_text

ItemKind = Literal["pairwise", "individual", "verdict"]
Status = Literal["ok", "unparseable", "failed"]

Decision = Union[Preference, Verdict]
"""What an evaluator (or the meta-judge) decides about an item: a preference or a unit verdict."""


def decision_from_text(value: object) -> Decision:
    """A decision from any input spelling (`correct`, `Answer1`, `tie`, 1 ...); ValueError otherwise."""
    if isinstance(value, (Preference, Verdict)):
        return value
    try:
        return verdict_from_text(value)
    except ValueError:
        return preference_from_text(value)


def _optional(convert: Callable[[object], object]) -> BeforeValidator:
    """A validator that leaves None alone and converts anything else."""
    return BeforeValidator(lambda value: None if value is None else convert(value))


DecisionField = Annotated[Union[Decision, None], _optional(decision_from_text)]
PreferenceField = Annotated[Union[Preference, None], _optional(preference_from_text)]
UnscoredField = Annotated[Optional[Unscored], _optional(lambda v: v if isinstance(v, Unscored) else Unscored(str(v))),
                          PlainSerializer(lambda u: None if u is None else u.reason)]
"""In memory an `Unscored`, on disk its reason (null when there is a judgment)."""


class JudgedRecord(BaseModel):
    """A record that holds a judgment or says why it has none: `unscored` (its label fields then null)."""

    unscored: UnscoredField = None

    @model_validator(mode="before")
    @classmethod
    def _older_status(cls, data: Any) -> Any:
        """Records written before `unscored` said `status` (ok / unparseable / failed) and `error`."""
        if not isinstance(data, dict) or "status" not in data or data.get("unscored") is not None:
            return data
        status, error = data["status"], str(data.get("error") or "")
        data = {k: v for k, v in data.items() if k not in ("status", "error")}
        if status == "failed":
            data["unscored"] = error if error.startswith(CALL_FAILED) else f"{CALL_FAILED}{error}"
        elif status != "ok":
            data["unscored"] = error or str(status)
        return data

    @property
    def status(self) -> Status:
        """ok, or why not: `failed` (the call failed) or `unparseable` (the reply could not be read)."""
        if self.unscored is None:
            return "ok"
        return "failed" if self.unscored.call_failed else "unparseable"

    @property
    def ok(self) -> bool:
        return self.unscored is None


def labels_for(kind: ItemKind) -> tuple[Decision, ...]:
    """The decisions an evaluator (and the meta-judge) may give for an item of this kind."""
    if kind == "pairwise":
        return tuple(Preference)
    if kind == "verdict":
        return tuple(Verdict)
    return ()


class MetaItem(BaseModel):
    """One item to be judged by every evaluator."""

    id: str
    kind: ItemKind
    instruction: str = ""
    """Pairwise: the instruction. Verdict: the exam question."""
    output_1: str = ""
    output_2: str = ""
    text: str = ""
    """Individual: the text scored. Verdict: the candidate's answer."""
    reference: str = ""
    """Verdict: the reference unit (as a `<unit id=...>` line)."""
    gold_label: DecisionField = None
    """Pairwise / verdict gold decision (None when unknown)."""
    gold_score: float | None = None
    """Individual gold human score."""
    source: str = ""

    def oracle_key(self) -> str:
        """sha1 of the item's content; the simulated backend's oracle holds gold under this key."""
        return oracle_key(self.kind, self.instruction, self.output_1, self.output_2, self.text)


def text_key(text: str) -> str:
    """The simulated backend's key for one text in a pairwise gold table: sha1 of the stripped text."""
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()


def pairwise_oracle(items: Iterable[tuple[str, str, str, int]]) -> dict[str, str]:
    """A pairwise gold table for the simulated backend from (instruction, output_1, output_2, label)
    tuples, label 0 = tie: {text_key(instruction): text_key(the better output) or "tie"}. Here, not in the
    simulator, so callers hand gold to it through an endpoint (the gateway's register_oracle)."""
    out = {}
    for instruction, output_1, output_2, label in items:
        out[text_key(instruction)] = "tie" if label == 0 else text_key(output_1 if label == 1 else output_2)
    return out


def oracle_key(kind: str, instruction: str, output_1: str, output_2: str, text: str) -> str:
    if kind == "pairwise":
        body = f"{instruction}\n\n{output_1}\n\n{output_2}"
    elif kind == "individual":
        body = text
    else:
        body = f"{instruction}\n\n{text}"
    return hashlib.sha1(body.encode("utf-8")).hexdigest()


class Assessment(JudgedRecord):
    """Step 1: one evaluator's decision (or score) with its explanation for one item."""

    item_id: str
    evaluator: str
    decision: DecisionField = None
    score: float | None = None
    explanation: str = ""
    source: Literal["model", "imported", "exam"] = "model"


class MetaJudgment(JudgedRecord):
    """Step 2, pairwise: one meta-verdict on two evaluators' assessments of one item (JDEval or MDEval)."""

    id: str
    method: Literal["jdeval", "mdeval"]
    item_id: str
    draw: int
    """Which of the item's seeded pair draws this is (0, 1, 2)."""
    order: Literal["forward", "reversed"] = "forward"
    assistant_1: str
    """Evaluator shown as Assistant1."""
    assistant_2: str
    better_answer: DecisionField = None
    """The meta-judge's own decision on the item."""
    better_assistant: PreferenceField = None
    """What the meta-judge said: FIRST (Assistant1), SECOND (Assistant2) or TIE (equally good)."""
    outcome: PreferenceField = None
    """Match outcome for (assistant_1, assistant_2); None when unparseable / failed (excluded)."""
    rule_outcome: PreferenceField = None
    """What the JDEval rules give for the meta-judge's better answer (None when the explanation decides)."""
    rule_violation: bool = False
    """The meta-judge's stated better assistant contradicts the rules."""
    answer_reasoning: str = ""
    assistant_reasoning: str = ""
    rounds: int = 0
    """MDEval: referee turns taken."""
    raw: str = ""
    """The start of an unreadable reply (kept to show what the meta-judge said instead)."""


class Turn(BaseModel):
    """One step of a debate transcript."""

    round: int
    speaker: Literal["referee", "assistant_1", "assistant_2"]
    kind: Literal["question", "verdict", "statement", "unparseable"]
    text: str
    words: int = 0


class Debate(JudgedRecord):
    """MDEval: the whole debate behind one meta-judgment."""

    judgment_id: str
    item_id: str
    assistant_1: str
    assistant_2: str
    turns: list[Turn] = Field(default_factory=list)
    rounds: int = 0
    questions: int = 0
    verdict: PreferenceField = None
    """The referee's verdict (FIRST = Assistant1); None when the debate ended without one."""
    forced: bool = False
    """The verdict came in the last allowed round, where the referee may only decide."""


class IndividualJudgment(JudgedRecord):
    """Step 2, individual (JDEval-i or BSMEval): the meta-judge's score of one assessment."""

    id: str
    method: Literal["jdeval-i", "bsmeval"]
    item_id: str
    evaluator: str
    own_decision: str | None = None
    """JDEval-i: the meta-judge's own decision (pairwise / verdict) or score (individual) for the item."""
    own_score: float | None = None
    score: float | None = None
    """Score of the assessment, 1-5 (BSMEval: mean over branches); None when unparseable."""
    branches: list[str] = Field(default_factory=list)
    branch_scores: list[float | None] = Field(default_factory=list)
    reasoning: str = ""
