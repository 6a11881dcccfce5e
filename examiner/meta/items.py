"""Reading meta-evaluation items: JSONL/JSON files with a field mapping, or the shared LLMBar sets.

Why a mapping: preference data sets name the same fields differently (`input`/`instruction`,
`output_1`/`response_a`, `label`/`preference`...). `FieldMap` says which key holds what; the kind of
an item (pairwise or individual) follows from which fields are present.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examiner.errors import UserError
from examiner.core.assessments import GOLD_TO_LABEL, PAIRWISE_LABELS, MetaItem


@dataclass(frozen=True)
class FieldMap:
    """Keys of the input records (defaults match LLMBar's files)."""

    id: str = "id"
    instruction: str = "input"
    output_1: str = "output_1"
    output_2: str = "output_2"
    label: str = "label"
    text: str = "text"
    score: str = "score"


def _gold_label(value: Any) -> str | None:
    """Gold preference 0/1/2 (or 'tie'/'Answer1'/'Answer2', or 'a'/'b') as a pairwise label."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        v = value.strip()
        for label in PAIRWISE_LABELS:
            if v.lower() == label.lower():
                return label
        aliases = {"a": "Answer1", "b": "Answer2", "1": "Answer1", "2": "Answer2", "0": "tie", "draw": "tie"}
        if v.lower() in aliases:
            return aliases[v.lower()]
        raise UserError(f"gold preference {value!r} is not 0, 1, 2 (or tie / Answer1 / Answer2)")
    try:
        return GOLD_TO_LABEL[int(value)]
    except (KeyError, ValueError, TypeError):
        raise UserError(f"gold preference {value!r} is not 0, 1, 2 (or tie / Answer1 / Answer2)") from None


def item_from_record(record: dict[str, Any], index: int, fields: FieldMap, source: str = "") -> MetaItem:
    """One item; pairwise when both outputs are present, else individual (text + score)."""
    item_id = str(record.get(fields.id, f"{source or 'item'}/{index}"))
    if fields.output_1 in record and fields.output_2 in record:
        return MetaItem(
            id=item_id, kind="pairwise", instruction=str(record.get(fields.instruction, "")),
            output_1=str(record[fields.output_1]), output_2=str(record[fields.output_2]),
            gold_label=_gold_label(record.get(fields.label)), source=source,
        )
    if fields.text in record:
        raw = record.get(fields.score)
        try:
            score = None if raw is None or raw == "" else float(raw)
        except (TypeError, ValueError):
            raise UserError(f"record {index}: score {raw!r} is not a number") from None
        return MetaItem(id=item_id, kind="individual", instruction=str(record.get(fields.instruction, "")),
                        text=str(record[fields.text]), gold_score=score, source=source)
    raise UserError(
        f"record {index} of {source or 'input'} has neither `{fields.output_1}`+`{fields.output_2}` "
        f"(pairwise) nor `{fields.text}` (individual); use the field-mapping flags"
    )


def load_items(spec: str, fields: FieldMap | None = None, limit: int | None = None) -> list[MetaItem]:
    """Items from `llmbar:SUBSET[,SUBSET]`, a .jsonl file or a .json array file."""
    fields = fields or FieldMap()
    if spec.startswith("llmbar:"):
        from examiner.datasets import load_llmbar

        subsets = [s for s in spec.removeprefix("llmbar:").split(",") if s]
        items = [
            MetaItem(id=p.id, kind="pairwise", instruction=p.input, output_1=p.output_1, output_2=p.output_2,
                     gold_label=GOLD_TO_LABEL[p.label], source=p.subset)
            for p in load_llmbar(subsets)
        ]
        return items[:limit] if limit else items
    path = Path(spec)
    if not path.is_file():
        raise UserError(f"input file {path} does not exist (or use llmbar:SUBSET)")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".json":
            records = json.loads(text)
            if not isinstance(records, list):
                raise UserError(f"{path} must hold a JSON array of records")
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON/JSONL: {exc}") from None
    items = [item_from_record(r, i, fields, path.stem) for i, r in enumerate(records)]
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise UserError(f"{path}: item ids are not unique (map a unique field with --id-field)")
    kinds = {i.kind for i in items}
    if len(kinds) > 1:
        raise UserError(f"{path} mixes pairwise and individual records")
    return items[:limit] if limit else items


def concat(groups: Sequence[Sequence[MetaItem]]) -> list[MetaItem]:
    return [item for group in groups for item in group]
