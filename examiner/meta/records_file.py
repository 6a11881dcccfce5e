"""Append-only JSONL files of pydantic records, read back by id: what makes a meta run resumable.

The files follow the one JSONL policy of examiner/core/jsonl.py: a torn last line (a run killed
mid-write) is counted in `torn_lines` and its record redone; damage elsewhere is a CorruptRunFile naming
file and line; before the first append a torn tail is moved to `<file>.torn`.
"""

from __future__ import annotations

from io import TextIOWrapper
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from examiner.core.jsonl import read_jsonl, repair_tail

R = TypeVar("R", bound=BaseModel)


class JsonlStore(Generic[R]):
    """Records of one model in one JSONL file; `key(record)` names a record (last one wins on reload)."""

    def __init__(self, path: Path | None, model: type[R], key: str = "id") -> None:
        self.path = path
        self.model = model
        self.key = key
        self.records: dict[str, R] = {}
        self.torn_lines = 0
        if path is not None:
            read = read_jsonl(path, model.model_validate_json)
            self.torn_lines = int(read.torn_tail)
            for record in read.rows:
                self.records[self.id_of(record)] = record
        self._fh: TextIOWrapper | None = None

    def id_of(self, record: R) -> str:
        if self.key == "assessment":
            return f"{record.item_id}|{record.evaluator}"  # type: ignore[attr-defined]
        return str(getattr(record, self.key))

    def __contains__(self, record_id: str) -> bool:
        return record_id in self.records

    def add(self, record: R) -> None:
        self.records[self.id_of(record)] = record
        if self.path is not None:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                repair_tail(self.path)
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(record.model_dump_json() + "\n")
            self._fh.flush()

    def values(self) -> list[R]:
        return list(self.records.values())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
