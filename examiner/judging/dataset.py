"""What `examiner judge` needs from each dataset record, with user-chosen field names.

The records come from the one dataset loader (examiner.corpus.datasets.load_dataset) and its bad-row policy:
one bad row (missing field, empty response, label outside {0,1,2}, human score out of range, broken
JSON) must not stop a long paid run; it is reported with its line number and field and counted in the
report, and the other rows still run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examiner.core.labels import Preference
from examiner.corpus.datasets import FieldMap, RowError, Skipped, SourceRecord, field_text, load_dataset, parse_number, parse_preference
from examiner.corpus.record_fields import field_value


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


def _row(record: SourceRecord, fields: FieldMap, req: Requirements) -> Row:
    """A record as a Row; every key may be dotted (`scores.coherence`), read as metric-stats reads it."""
    obj, line = record.data, record.line
    row_id = field_value(obj, fields.id)
    row = Row(line=line, id=str(row_id if row_id is not None else f"row{line}"))
    for name in req.text_fields:
        setattr(row, name, field_text(obj, getattr(fields, name), required=True))
    for name in req.optional_text:
        value = field_text(obj, getattr(fields, name), required=False)
        if value is not None:
            setattr(row, name, value)
    ref = field_text(obj, fields.reference, required=req.need_reference)
    row.reference = ref
    label = field_value(obj, fields.label)
    if label is not None:
        row.label = parse_preference(label, fields.label)
    elif req.need_label:
        raise RowError(fields.label, f"missing field '{fields.label}'")
    human = field_value(obj, fields.human)
    if human is not None:
        row.human = parse_number(human, fields.human, req.human_range)
    elif req.need_human:
        raise RowError(fields.human, f"missing field '{fields.human}'")
    for name in ("group", "system"):
        value = field_value(obj, getattr(fields, name))
        if value is not None:
            setattr(row, name, str(value))
    return row


def load_rows(spec: str | Path, fields: FieldMap, req: Requirements, limit: int | None = None,
              ) -> tuple[list[Row], list[Skipped]]:
    """Usable rows and skipped rows of a dataset (UserError only when the file itself is unusable)."""
    return load_dataset(str(spec), lambda record: _row(record, fields, req), lambda row: row.id, id_field=fields.id,
                        limit=limit)
