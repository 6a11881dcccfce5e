"""Append-only JSONL files of pydantic records, read back by id: what makes a meta run resumable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

R = TypeVar("R", bound=BaseModel)


class JsonlStore(Generic[R]):
    """Records of one model in one JSONL file; `key(record)` names a record (last one wins on reload)."""

    def __init__(self, path: Path | None, model: type[R], key: str = "id") -> None:
        self.path = path
        self.model = model
        self.key = key
        self.records: dict[str, R] = {}
        self.skipped_lines = 0
        if path is not None and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                try:
                    record = model.model_validate_json(line)
                except (ValidationError, json.JSONDecodeError):
                    self.skipped_lines += 1  # a line cut off by an interrupted run: redone
                    continue
                self.records[self.id_of(record)] = record
        self._fh = None

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
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(record.model_dump_json() + "\n")
            self._fh.flush()

    def values(self) -> list[R]:
        return list(self.records.values())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
