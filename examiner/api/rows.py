"""Row-level results: a job's verdicts, units, outcomes, judgments and model calls as typed records.

Each kind of row is a frozen dataclass; a `Rows` holds them in the order the job wrote them, reads like a
tuple, and turns into plain dicts (`to_records()`) or a pandas DataFrame (`to_pandas()`, when pandas is
installed). The readers take a run folder and read its files once, when asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

if TYPE_CHECKING:
    import pandas
    from examiner.core.ledger_record import LedgerRecord

R = TypeVar("R")


class Rows(Sequence[R], Generic[R]):
    """An immutable sequence of one kind of row, with table exports."""

    __slots__ = ("_kind", "_items")

    def __init__(self, kind: type[R], items: Iterable[R] = ()) -> None:
        self._kind = kind
        self._items = tuple(items)

    @overload
    def __getitem__(self, index: int) -> R: ...
    @overload
    def __getitem__(self, index: slice) -> Rows[R]: ...
    def __getitem__(self, index: int | slice) -> R | Rows[R]:
        if isinstance(index, slice):
            return Rows(self._kind, self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[R]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rows) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return f"Rows[{self._kind.__name__}]({len(self._items)} rows)"

    @property
    def columns(self) -> tuple[str, ...]:
        """The field names of the row type, in order: the table's columns."""
        return tuple(f.name for f in dataclasses.fields(self._kind))  # type: ignore[arg-type]

    def to_records(self) -> list[dict[str, Any]]:
        """Each row as a plain dict (field name -> value)."""
        return [dataclasses.asdict(row) for row in self._items]  # type: ignore[call-overload]

    def to_pandas(self) -> pandas.DataFrame:
        """The rows as a pandas DataFrame, one column per field (the columns are there when empty)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Rows.to_pandas() needs pandas, which is not installed: pip install pandas "
                              "(Rows.to_records() gives the same rows as plain dicts)") from None
        return pandas.DataFrame(self.to_records(), columns=list(self.columns))


@dataclass(frozen=True)
class UnitRow:
    """One knowledge unit of an exam (units.jsonl)."""

    id: str
    text: str
    documents: tuple[str, ...]
    """The documents its text comes from."""
    token_count: int


@dataclass(frozen=True)
class VerdictRow:
    """A judge's verdict on one unit given one answer (verdicts.jsonl)."""

    id: str
    target: str
    round: int
    unit_id: str
    question_id: str
    answer_id: str
    verdict: str
    """correct, incorrect, unrelated, or unscored (no usable verdict: `reason` says why)."""
    reason: str
    mode: str
    """The exam mode: refeval, top or noref."""
    panel: int
    """Judge panel members that marked it (0: one judge)."""


@dataclass(frozen=True)
class OutcomeRow:
    """Where one unit ended for one target (outcomes.jsonl)."""

    unit_id: str
    target: str
    status: str
    """correct or incorrect (covered), unanswered (asked about the most times, never covered), or
    uncovered (still in the pool when the exam stopped)."""
    covered_round: int | None
    times_targeted: int
    verdict_id: str | None


@dataclass(frozen=True)
class CallCost:
    """One answered model request of the ledger (ledger.jsonl): who asked, what it used, what it cost."""

    role: str
    stage: str
    round: int | None
    endpoint: str
    model: str
    cache_hit: bool
    """Answered from examiner's own response cache: nothing sent, nothing paid."""
    batch: bool
    """Answered through the provider's batch API."""
    prompt_tokens: int
    cached_tokens: int
    """Part of prompt_tokens read from the provider's prompt cache."""
    completion_tokens: int
    reasoning_tokens: int
    """Part of completion_tokens spent on hidden reasoning."""
    cost_usd: float


@dataclass(frozen=True)
class JudgmentRow:
    """One judgment of a dataset row (judgments.jsonl): a pairwise verdict, or a single score."""

    id: str
    method: str
    order: str | None
    """Pairwise: original or swapped (the order the two outputs were shown in); None for single scores."""
    verdict: int | None
    """Pairwise: 1 or 2 (the better output, in the dataset's order) or 0 (a tie); None: unscored."""
    label: int | None
    """The row's gold preference, where the dataset has one."""
    score: float | None
    """Single scores (G-Eval, reference, RevisEval on one output): the grade; None: unscored."""
    human: float | None
    """The row's human score, where the dataset has one."""
    reason: str
    unscored: str | None
    """Why there is no verdict or score (None when there is one)."""
    failed: bool
    """The call failed for good (not merely unparseable)."""


def read_units(run_dir: Path) -> Rows[UnitRow]:
    """The exam's knowledge units, in the order written."""
    from examiner.core.records import UnitRecord
    from examiner.core.rundir import RunDir

    units = RunDir(run_dir).records(UnitRecord).values()
    return Rows(UnitRow, (UnitRow(u.id, u.text, tuple(dict.fromkeys(s.document for s in u.sources)), u.token_count)
                          for u in units))


def read_verdicts(run_dir: Path) -> Rows[VerdictRow]:
    """Every verdict the exam's judge gave (a re-judged unit's last verdict), in the order written."""
    from examiner.core.records import VerdictRecord
    from examiner.core.rundir import RunDir

    verdicts = RunDir(run_dir).records(VerdictRecord).values()
    return Rows(VerdictRow, (VerdictRow(v.id, v.target, v.round, v.unit_id, v.question_id, v.answer_id, v.verdict,
                                        v.reason, v.mode, len(v.members)) for v in verdicts))


def read_outcomes(run_dir: Path) -> Rows[OutcomeRow]:
    """Each unit's standing per target when the exam ended (empty while a run has not finished)."""
    from examiner.core.records import UnitOutcome
    from examiner.core.rundir import RunDir

    outcomes = RunDir(run_dir).records(UnitOutcome).values()
    return Rows(OutcomeRow, (OutcomeRow(o.unit_id, o.target, o.status, o.covered_round, o.times_targeted,
                                        o.verdict_id) for o in outcomes))


def read_costs(run_dir: Path) -> Rows[CallCost]:
    """Every answered model request in the folder's ledger (cache hits included, at no cost)."""
    from examiner.core.rundir import RunDir
    from examiner.llm.ledger import answered

    records = answered(RunDir(run_dir).ledger_records())
    return Rows(CallCost, (_call_cost(r) for r in records))


def _call_cost(record: LedgerRecord) -> CallCost:
    """A call's row from its typed ledger record (a field an older ledger lacks reads as the record's default)."""
    return CallCost(role=record.role, stage=str(record.stage), round=record.round, endpoint=record.endpoint,
                    model=record.model, cache_hit=record.cache_hit, batch=record.batch,
                    prompt_tokens=record.prompt_tokens, cached_tokens=record.cached_tokens,
                    completion_tokens=record.completion_tokens, reasoning_tokens=record.reasoning_tokens,
                    cost_usd=record.cost_usd)


def judgment_rows(records: Sequence[dict[str, Any]]) -> Rows[JudgmentRow]:
    """Judgment records (as judgments.jsonl holds them) as rows."""
    def number(value: Any) -> float | None:
        return None if value is None else float(value)

    return Rows(JudgmentRow, (JudgmentRow(
        id=str(r.get("id")), method=str(r.get("method", "")), order=r.get("order"),
        verdict=None if r.get("verdict") is None else int(r["verdict"]),
        label=None if r.get("label") is None else int(r["label"]), score=number(r.get("score")),
        human=number(r.get("human")), reason=str(r.get("reason") or ""), unscored=r.get("unscored"),
        failed=bool(r.get("failed"))) for r in records))

