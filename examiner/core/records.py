"""Records an exam writes to its run directory, one pydantic model per JSONL file.

Files are append-only; a record may be written again after a resume (same id, same content), so
readers keep the last record per id (`RunStore.load`). Ids are deterministic hashes of their inputs,
which is what lets a resumed run reproduce an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (AliasChoices, BaseModel, Field, SerializerFunctionWrapHandler, field_validator,
                      model_serializer)
from typing_extensions import Self

from examiner.core.contract import Mark
from examiner.core.labels import Unscored, Verdict
from examiner.core.names import ExamJudgeMethod, ExamModeName

VerdictType = Literal["correct", "incorrect", "unrelated", "abstained", "unscored"]
"""A verdict's label in memory; `unscored` is a unit the judge gave no usable verdict for (its reason says
why). On disk, as in judge and meta records, that is `verdict: null` with the reason under `unscored`; runs
written before name the label `type` (read as `verdict`) and say `"unscored"` or `"unparseable"` for no
verdict, read as `unscored`."""
QuestionType = Literal["who", "what", "when", "where", "why", "how", "other"]
UnitStatus = Literal["correct", "incorrect", "abstained", "unanswered", "uncovered"]
RunStatus = Literal["running", "completed", "budget_exhausted", "incomplete", "interrupted", "failed"]
"""`incomplete`: a model call failed for good (every replica down past its retries), so the run stopped
where it was; `interrupted`: a stop signal (SIGINT, SIGTERM) ended it. `examiner resume` continues both."""


class SourceRef(BaseModel):
    """Where a knowledge unit's text comes from."""

    document: str
    passage_id: str
    start: int
    end: int


class UnitRecord(BaseModel):
    """units.jsonl: one knowledge unit (after near-duplicate merging)."""

    id: str
    text: str
    sources: list[SourceRef]
    token_count: int


class ClusterRecord(BaseModel):
    """One cluster of one round (in clusters/<target>/round-N.json)."""

    id: str
    center: str
    """Unit id nearest the centroid."""
    members: list[str]


class ClusterRound(BaseModel):
    """clusters/<target>/round-N.json: the clustering of the uncovered pool at the start of a round."""

    round: int
    target: str
    k: int
    clusters: list[ClusterRecord]
    projection: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """2-D PCA coordinates of the pool's units (for the report's maps)."""


class GateCheckRecord(BaseModel):
    """One check of the question gate on one question: what it checked, whether the question passed, why not."""

    name: Literal["language", "labels", "answerable", "citation", "guessable", "near_duplicate"]
    passed: bool
    reason: str = ""


class QuestionRecord(BaseModel):
    """questions.jsonl: one question (or probe) put to one target."""

    id: str
    round: int
    target: str
    """The candidate endpoint that answers it."""
    cluster_id: str
    kind: Literal["question", "probe", "top"] = "question"
    parent_id: str | None = None
    """For a probe: the question it follows up."""
    text: str
    targets: list[str]
    """Unit ids the question is meant to cover (all members of its cluster)."""
    qtype: QuestionType = "other"
    leak_rejections: int = 0
    regenerations: int = 0
    dropped_targets: list[str] = Field(default_factory=list)
    """Ids the examiner named that were not units of the cluster."""
    status: Literal["ok", "unparseable", "no_targets", "gate_rejected"] = "ok"
    """`gate_rejected`: the question gate (examiner/exam/gate/) rejected it and its rewrite; its units go
    back to the pool."""
    gate: list[GateCheckRecord] = Field(default_factory=list)
    """The question gate's checks of it, each with its reason (empty when the gate is off)."""
    guessable: bool = False
    """The gate's guesser answered it right without the corpus (tagged; dropped only with
    `gate_drop_guessable`)."""
    gate_rewrites: int = 0
    """Times the gate had it rewritten (0 or 1)."""
    gate_draft: str = ""
    """The draft the gate rejected before this rewrite ("" when it kept the first)."""
    gate_draft_checks: list[GateCheckRecord] = Field(default_factory=list)
    """The gate's checks of that rejected draft, each with its reason."""


class AnswerRecord(BaseModel):
    """answers.jsonl: the target's reply to a question, with the classic baseline scores."""

    id: str
    question_id: str
    round: int
    target: str
    text: str
    bleu: float | None = None
    """sacrebleu sentence BLEU of the answer against its targets' reference texts."""
    embedding_similarity: float | None = None
    """Cosine similarity of answer and concatenated reference texts (all-MiniLM-L6-v2)."""
    stated_confidence: float | None = None
    """The confidence the target stated at the end of its answer (`Confidence: N%`, in [0, 1]; the line is
    not in `text`, so the judge does not read it); None when it stated none."""
    token_confidence: float | None = None
    """exp(mean token logprob) of the answer, when the exam asked for logprobs (`answer_logprobs`) and the
    endpoint gave them; None otherwise."""


_SPELLINGS: dict[Verdict, VerdictType] = {Verdict.CORRECT: "correct", Verdict.INCORRECT: "incorrect",
                                          Verdict.UNRELATED: "unrelated", Verdict.ABSTAINED: "abstained"}


def _spelling(mark: Mark[Verdict]) -> VerdictType:
    return "unscored" if isinstance(mark.label, Unscored) else _SPELLINGS[mark.label]


def _mark(verdict: VerdictType, reason: str, members: dict[str, Mark[Verdict]] | None = None) -> Mark[Verdict]:
    label: Verdict | Unscored = Unscored(reason) if verdict == "unscored" else Verdict(verdict)
    return Mark(label, reason, members or {})


OLDER_NAMES = {"type": "verdict"}
"""Field names runs written before used for a verdict's label (`type`), read as today's (`verdict`)."""


class _OnDisk(BaseModel):
    """The one "no verdict" shape on disk: the label null and an `unscored` reason beside it; the label is
    `verdict` (as in exports and overrides.jsonl), `type` in files written before, which still read."""

    verdict: VerdictType = Field(validation_alias=AliasChoices("verdict", "type"))
    reason: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _older_spelling(cls, value: object) -> object:
        return "unscored" if value in (None, "unparseable") else value

    @model_serializer(mode="wrap")
    def _unscored_column(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        unscored = self.verdict == "unscored"
        data["verdict"], data["unscored"] = (None, self.reason) if unscored else (self.verdict, None)
        return data

    @property
    def type(self) -> VerdictType:
        """The label under its older name (read-only; use `verdict`)."""
        return self.verdict

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; an update naming the label by its older name (`type`) sets `verdict`."""
        update = {OLDER_NAMES.get(k, k): v for k, v in update.items()} if update else update
        return super().model_copy(update=update, deep=deep)


class MemberVerdict(_OnDisk):
    """One panel member's verdict on a unit (inside a VerdictRecord)."""


class VerdictRecord(_OnDisk):
    """verdicts.jsonl: the judge's label for one unit given one answer."""

    id: str
    answer_id: str
    question_id: str
    unit_id: str
    round: int
    target: str
    mode: ExamModeName = "refeval"
    members: dict[str, MemberVerdict] = Field(default_factory=dict)
    """With a judge panel: each member's own verdict, by member (endpoint) name; empty for one judge."""

    @classmethod
    def from_mark(cls, mark: Mark[Verdict], **fields: object) -> "VerdictRecord":
        """The record of a judge's mark (a panel's with each member's own verdict): the one place where
        a mark becomes text on disk."""
        members = {name: MemberVerdict(verdict=_spelling(m), reason=m.reason) for name, m in mark.members.items()}
        return cls(verdict=_spelling(mark), reason=mark.reason, members=members, **fields)

    def mark(self) -> Mark[Verdict]:
        """The judge's mark again, as the reports read it."""
        return _mark(self.verdict, self.reason, {n: _mark(m.verdict, m.reason) for n, m in self.members.items()})


SELF_CHECK_STAGE = "self_check"
"""The ledger stage of the judge self-check's calls: kept apart from the exam's own judging in the cost
tables and in `examiner cost --by stage`."""


class SelfCheckRecord(BaseModel):
    """self_check.jsonl: the judge's second marking of one sampled answer, its units in another order.

    Kept so that the self-agreement figure is reproduced by a resumed run without judging again, and
    so the report can show which units the judge labelled differently the second time."""

    id: str
    answer_id: str
    question_id: str
    target: str
    round: int
    order: list[str]
    """The target unit ids in the order the judge saw them the second time."""
    labels: dict[str, VerdictType]
    """Unit id -> the second label (`unscored` when the judge gave none)."""
    reasons: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_marks(cls, order: list[str], marks: dict[str, Mark[Verdict]], missing: Mark[Verdict],
                   **fields: object) -> "SelfCheckRecord":
        """The record of the judge's second marking, spelled as verdicts are; `missing` stands for a unit
        the judge gave no mark."""
        got = {uid: marks.get(uid, missing) for uid in order}
        return cls(order=order, labels={uid: _spelling(m) for uid, m in got.items()},
                   reasons={uid: m.reason for uid, m in got.items()}, **fields)


class WordingRecord(BaseModel):
    """rewording.jsonl: one target's answer to one wording of a round-1 question, and the judge's labels.

    Wording 0 is the question as the exam asked it (its labels are the exam's verdicts, copied; no call);
    1..K are the examiner's paraphrases. Never counted in accuracy or outcomes: the records feed the
    variance of accuracy in cluster, wording and judge parts (examiner.stats.wording)."""

    id: str
    cluster_id: str
    question_id: str
    """The exam's question (the target's copy) that this wording rewords."""
    target: str
    round: int
    wording: int
    text: str
    answer: str = ""
    labels: dict[str, VerdictType]
    """Target unit id -> label of this wording's answer."""

    @classmethod
    def from_marks(cls, units: list[str], marks: dict[str, Mark[Verdict]], missing: Mark[Verdict],
                   **fields: object) -> "WordingRecord":
        """The record of the judge's marks of one wording's answer, spelled as verdicts are."""
        return cls(labels={uid: _spelling(marks.get(uid, missing)) for uid in units}, **fields)


class UnitOutcome(BaseModel):
    """Final standing of one unit for one target (in report.json and outcomes.jsonl)."""

    unit_id: str
    target: str
    status: UnitStatus
    """correct / incorrect / abstained (covered: a declined answer counts as asked), unanswered (targeted max
    times, never covered), uncovered (left in
    the pool when the exam stopped)."""
    verdict_id: str | None = None
    times_targeted: int = 0
    times_targeted_uncovered: int = 0
    covered_round: int | None = None
    cluster_id: str | None = None
    """Cluster of the unit in the round it was covered (or its last round)."""
    qtype: QuestionType | None = None


class RoundSummary(BaseModel):
    """Bookkeeping of one round for one target."""

    round: int
    target: str
    pool_before: int
    clusters: int
    questions: int
    probes: int
    covered: int
    pool_after: int
    unanswered_new: int = 0


class RunInfo(BaseModel):
    """run.json: what was asked and how the run ended."""

    run_id: str
    status: RunStatus = "running"
    stop_reason: str = ""
    mode: ExamModeName = "refeval"
    judge_mode: ExamJudgeMethod = "refeval"
    """Which judge gave the verdicts: `refeval` (the reference judge), `reviseval` or `geval`."""
    judges: list[str] = Field(default_factory=list)
    """The judge panel's endpoints (empty: one judge, the `judge` role's endpoint)."""
    targets: list[str]
    corpus_paths: list[str]
    documents: int = 0
    passages: int = 0
    units: int = 0
    skipped_files: list[dict[str, str]] = Field(default_factory=list)
    skipped_passages: list[dict[str, str]] = Field(default_factory=list)
    """`llm` unit mode: passages the examiner drew no statement from (document, passage_id, reason)."""
    decoded_with_replacement: list[str] = Field(default_factory=list)
    language: str = ""
    """ISO 639-1 code of the exam's language (questions, answers, judging); empty for runs before it."""
    languages: dict[str, int] = Field(default_factory=dict)
    """Documents per detected language (`und`: undetermined)."""
    rounds: list[RoundSummary] = Field(default_factory=list)
    ignored_verdicts: int = 0
    """Verdicts naming a unit that was not a target of the question (ignored and logged)."""
    unparseable_judgments: int = 0
    unparseable_questions: int = 0
    leak_rejections: int = 0
    started: float = 0.0
    finished: float | None = None
    examiner_version: str = ""
    """The package version that started the run (empty for runs that predate the field)."""
    paper: str = ""
    """The earlier run whose questions this run's targets sat (`examiner run --paper`); empty: adaptive exam."""
    prompts_sha256: str = ""
    """prompting.prompts_digest() when the run started: which prompt files it used."""


def record_key(record: BaseModel) -> str:
    """The id a record is deduplicated by (outcomes: target + unit)."""
    if isinstance(record, UnitOutcome):
        return f"{record.target}/{record.unit_id}"
    return str(getattr(record, "id"))  # noqa: B009 - BaseModel declares no id; every record model has one
