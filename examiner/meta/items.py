"""Meta-evaluation items from a user's dataset: JSONL/JSON files with a field mapping, or the shared
LLMBar sets, read by the one dataset loader (examiner.corpus.datasets.load_dataset) and its bad-row policy.

Why a mapping: preference data sets name the same fields differently (`input`/`instruction`,
`output_1`/`response_a`, `label`/`preference`...). `FieldMap` (examiner.corpus.datasets, shared with `examiner
judge`) says which key holds what; the kind of an item (pairwise or individual) follows from which fields
are present.
"""

from __future__ import annotations

from typing import Any

from examiner.core.assessments import MetaItem
from examiner.core.labels import Preference
from examiner.corpus.datasets import LLMBAR_FIELDS, FieldMap, RowError, Skipped, SourceRecord, field_text, load_dataset, parse_number, parse_preference
from examiner.core.errors import UserError


def _gold(value: Any, key: str) -> Preference | None:
    """Gold preference 0/1/2 (or another spelling: tie, Answer1, a, ...); None when the record has none."""
    return None if value is None or value == "" else parse_preference(value, key)


def item_from_record(record: SourceRecord, fields: FieldMap) -> MetaItem:
    """One item; pairwise when both outputs are present, else individual (text `fields.output` + score
    `fields.human`). Text fields follow the judge's rule (`field_text`), but an empty output is kept: it is
    a legitimate (bad) response to compare."""
    data = record.data
    item_id = str(data.get(fields.id, f"{record.source or 'item'}/{record.index}"))
    instruction = field_text(data, fields.instruction, required=False, allow_empty=True) or ""

    def output(key: str) -> str:
        return field_text(data, key, required=True, allow_empty=True) or ""

    if fields.output_1 in data and fields.output_2 in data:
        return MetaItem(
            id=item_id, kind="pairwise", instruction=instruction,
            output_1=output(fields.output_1), output_2=output(fields.output_2),
            gold_label=_gold(data.get(fields.label), fields.label), source=record.source,
        )
    if fields.output in data:
        raw = data.get(fields.human)
        score = None if raw is None or raw == "" else parse_number(raw, fields.human)
        return MetaItem(id=item_id, kind="individual", instruction=instruction,
                        text=output(fields.output), gold_score=score, source=record.source)
    raise RowError("-", f"has neither `{fields.output_1}`+`{fields.output_2}` (pairwise) nor `{fields.output}` "
                        "(individual); use the field-mapping flags")


def load_items(spec: str, fields: FieldMap | None = None, limit: int | None = None,
               ) -> tuple[list[MetaItem], list[Skipped]]:
    """Items of `llmbar:SUBSET[,SUBSET]`, a .jsonl file or a .json array file, and the skipped records."""
    fields = fields or LLMBAR_FIELDS
    items, skipped = load_dataset(spec, lambda record: item_from_record(record, fields), lambda item: item.id,
                                  id_field=fields.id, limit=limit, what="input file")
    if not items:
        first = f"; first: {skipped[0].message}" if skipped else ""
        raise UserError(f"no usable items in {spec} ({len(skipped)} skipped{first})")
    if len({i.kind for i in items}) > 1:
        raise UserError(f"{spec} mixes pairwise and individual records")
    return items, skipped
