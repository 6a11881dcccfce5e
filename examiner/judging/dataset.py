"""Reading a judging dataset (JSONL) with user-chosen field names, row by row, with clear skips.

Why row by row: one bad row (missing field, empty response, label outside {0,1,2}, human score out of
range, broken JSON) must not stop a long paid run; it is reported with its line number and field and
counted in the report, and the other rows still run.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examiner.core.labels import Preference, preference_from_text
from examiner.errors import UserError

@dataclass
class FieldMap:
    """Which JSON key holds each input (the CLI's --*-field flags)."""

    id: str = "id"
    instruction: str = "instruction"
    output: str = "output"
    output_1: str = "output_1"
    output_2: str = "output_2"
    reference: str = "reference"
    label: str = "label"
    human: str = "human_score"
    source: str = "source"
    group: str = "group"
    system: str = "system"


@dataclass
class Row:
    """One usable dataset row; `line` is its 1-based line number in the file."""

    line: int
    id: str
    instruction: str = ""
    output: str = ""
    output_1: str = ""
    output_2: str = ""
    reference: str | None = None
    label: Preference | None = None
    human: float | None = None
    source: str = ""
    group: str | None = None
    system: str | None = None


@dataclass
class Skipped:
    """A row that could not be used, with the offending field and a message naming both."""

    line: int
    field: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


@dataclass
class Requirements:
    """What a method needs from each row."""

    text_fields: tuple[str, ...]
    """FieldMap attribute names that must be present and non-empty strings."""
    optional_text: tuple[str, ...] = ()
    """Attributes read when present (must be strings when present)."""
    need_reference: bool = False
    need_label: bool = False
    need_human: bool = False
    human_range: tuple[float, float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class RowError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _text(obj: dict[str, Any], key: str, *, required: bool, allow_empty: bool = False) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            raise RowError(key, f"missing field '{key}'")
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise RowError(key, f"field '{key}' must be text, got {type(value).__name__}")
    if not value.strip() and not allow_empty:
        if required:
            raise RowError(key, f"field '{key}' is empty")
        return None
    return value


def parse_label(value: Any, key: str) -> Preference:
    """A gold preference: 1, 2 or 0 (tie), or another input spelling of them; RowError otherwise."""
    try:
        return preference_from_text(value)
    except ValueError:
        raise RowError(key, f"field '{key}' must be 0, 1 or 2, got {value!r}") from None


def parse_number(value: Any, key: str, bounds: tuple[float, float] | None) -> float:
    """A finite number, within `bounds` when given; RowError otherwise."""
    if isinstance(value, bool):
        raise RowError(key, f"field '{key}' must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RowError(key, f"field '{key}' must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise RowError(key, f"field '{key}' must be a finite number, got {value!r}")
    if bounds is not None and not bounds[0] <= number <= bounds[1]:
        raise RowError(key, f"field '{key}' = {number:g} is outside {bounds[0]:g}-{bounds[1]:g}")
    return number


def _row(line: int, obj: dict[str, Any], fields: FieldMap, req: Requirements) -> Row:
    row = Row(line=line, id=str(obj.get(fields.id, f"row{line}")))
    for name in req.text_fields:
        setattr(row, name, _text(obj, getattr(fields, name), required=True))
    for name in req.optional_text:
        value = _text(obj, getattr(fields, name), required=False)
        if value is not None:
            setattr(row, name, value)
    ref = _text(obj, fields.reference, required=req.need_reference)
    row.reference = ref
    if fields.label in obj and obj[fields.label] is not None:
        row.label = parse_label(obj[fields.label], fields.label)
    elif req.need_label:
        raise RowError(fields.label, f"missing field '{fields.label}'")
    if fields.human in obj and obj[fields.human] is not None:
        row.human = parse_number(obj[fields.human], fields.human, req.human_range)
    elif req.need_human:
        raise RowError(fields.human, f"missing field '{fields.human}'")
    for name in ("group", "system"):
        key = getattr(fields, name)
        if key in obj and obj[key] is not None:
            setattr(row, name, str(obj[key]))
    return row


def load_rows(path: str | Path, fields: FieldMap, req: Requirements, limit: int | None = None,
              ) -> tuple[list[Row], list[Skipped]]:
    """Usable rows and skipped rows of a JSONL file (UserError only when the file itself is unusable)."""
    file = Path(path)
    if not file.is_file():
        raise UserError(f"dataset {file} does not exist")
    rows: list[Row] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    with file.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if limit is not None and len(rows) + len(skipped) >= limit:
                break
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                skipped.append(Skipped(line_no, "-", f"row {line_no}: not valid JSON ({exc.msg})"))
                continue
            if not isinstance(obj, dict):
                skipped.append(Skipped(line_no, "-", f"row {line_no}: expected a JSON object"))
                continue
            try:
                row = _row(line_no, obj, fields, req)
            except RowError as exc:
                skipped.append(Skipped(line_no, exc.field, f"row {line_no}: {exc}"))
                continue
            if row.id in seen:
                skipped.append(Skipped(line_no, fields.id, f"row {line_no}: duplicate id '{row.id}' in field '{fields.id}'"))
                continue
            seen.add(row.id)
            rows.append(row)
    return rows, skipped
