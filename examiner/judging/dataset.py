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
    obj, line = record.data, record.line
    row = Row(line=line, id=str(obj.get(fields.id, f"row{line}")))
    for name in req.text_fields:
        setattr(row, name, field_text(obj, getattr(fields, name), required=True))
    for name in req.optional_text:
        value = field_text(obj, getattr(fields, name), required=False)
        if value is not None:
            setattr(row, name, value)
    ref = field_text(obj, fields.reference, required=req.need_reference)
    row.reference = ref
    if fields.label in obj and obj[fields.label] is not None:
        row.label = parse_preference(obj[fields.label], fields.label)
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


def load_rows(spec: str | Path, fields: FieldMap, req: Requirements, limit: int | None = None,
              ) -> tuple[list[Row], list[Skipped]]:
    """Usable rows and skipped rows of a dataset (UserError only when the file itself is unusable)."""
    return load_dataset(str(spec), lambda record: _row(record, fields, req), lambda row: row.id, id_field=fields.id,
                        limit=limit)
