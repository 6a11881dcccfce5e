"""A person's correction of one exam verdict (overrides.jsonl in the run directory).

Why a record of its own: the judge's verdicts (verdicts.jsonl) are what the exam measured and never
change; a reviewer's disagreement is kept beside them, append-only, with who said it, when and why, so
a report can show the figures both ways and a meta-evaluation can use the corrections as human labels.
Rows are appended, so a verdict may be overridden several times: the latest row per (question, unit)
wins (the earlier ones stay in the file as history).

The person's label is `verdict`, as in verdicts.jsonl and the exports, and the label it replaced is
`verdict_before`; files written before name them `new` and `old`, which still read.
"""

from __future__ import annotations

from datetime import datetime, timezone
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, Field
from typing_extensions import Self

from examiner.core.records import VerdictType

OverrideLabel = Literal["correct", "incorrect", "abstained", "unrelated"]
"""What a person may set a verdict to (a person always gives a label: never `unscored`)."""


def _stripped_not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value.strip()


NonBlank = Annotated[str, AfterValidator(_stripped_not_blank)]
"""Text a person must give (who they are, why): stripped, and refused when blank."""


class OverrideRecord(BaseModel):
    """overrides.jsonl: one person's verdict on one unit given one question's answer."""

    question_id: str
    unit_id: str
    verdict_before: VerdictType = Field(validation_alias=AliasChoices("verdict_before", "old"))
    """The label in force when the person overrode it: the judge's verdict (verdicts.jsonl) the first time,
    the previous override after that, so the rows of one verdict read as its history (`old` before)."""
    verdict: OverrideLabel = Field(validation_alias=AliasChoices("verdict", "new"))
    """The person's label, in force until a later row for the same verdict (`new` before)."""
    reason: NonBlank
    who: NonBlank
    at: str
    """When, ISO 8601 in UTC (e.g. 2026-11-22T16:50:00Z)."""

    @property
    def key(self) -> tuple[str, str]:
        """The verdict it overrides: (question id, unit id)."""
        return (self.question_id, self.unit_id)

    @property
    def old(self) -> VerdictType:
        """`verdict_before` under its older name (read-only)."""
        return self.verdict_before

    @property
    def new(self) -> OverrideLabel:
        """`verdict` under its older name (read-only)."""
        return self.verdict

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; an update naming a label by its older name (`old`, `new`) sets today's field."""
        update = {OLDER_NAMES.get(k, k): v for k, v in update.items()} if update else update
        return super().model_copy(update=update, deep=deep)


OLDER_NAMES = {"old": "verdict_before", "new": "verdict"}
"""overrides.jsonl's field names before they were `verdict_before` and `verdict`."""


def utc_now() -> str:
    """The current time as overrides.jsonl writes it (ISO 8601, UTC, whole seconds)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def latest(rows: list[OverrideRecord]) -> dict[tuple[str, str], OverrideRecord]:
    """The override in force per (question id, unit id): the last row written for it."""
    current: dict[tuple[str, str], OverrideRecord] = {}
    for row in rows:
        current[row.key] = row
    return current


__all__ = ["OLDER_NAMES", "OverrideLabel", "OverrideRecord", "latest", "utc_now"]
