"""The run directory: append-only JSONL records, read back keeping the last record per id."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Iterable, TypeVar

from pydantic import BaseModel

from examiner.core.jsonl import read_models, repair_tail
from examiner.core.records import (
    AnswerRecord,
    ClusterRound,
    QuestionRecord,
    RunInfo,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
    record_key,
)

M = TypeVar("M", bound=BaseModel)

FILES = {
    UnitRecord: "units.jsonl",
    QuestionRecord: "questions.jsonl",
    AnswerRecord: "answers.jsonl",
    VerdictRecord: "verdicts.jsonl",
    UnitOutcome: "outcomes.jsonl",
}


class RunStore:
    """Writes records to a run directory and keeps an in-memory index of them by id."""

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._index: dict[type[BaseModel], dict[str, BaseModel]] = {}
        self._checked: set[type[BaseModel]] = set()

    def path(self, model: type[BaseModel]) -> Path:
        return self.dir / FILES[model]

    def append(self, records: Iterable[BaseModel]) -> None:
        """Append records (grouped by type) and index them; a record with a known id replaces it."""
        by_type: dict[type[BaseModel], list[BaseModel]] = {}
        for record in records:
            by_type.setdefault(type(record), []).append(record)
        with self._lock:
            for model, items in by_type.items():
                if model not in self._checked:
                    repair_tail(self.path(model))
                    self._checked.add(model)
                with self.path(model).open("a", encoding="utf-8") as handle:
                    for item in items:
                        handle.write(item.model_dump_json() + "\n")
                index = self._loaded(model)
                for item in items:
                    index[record_key(item)] = item

    def _loaded(self, model: type[M]) -> dict[str, M]:
        if model not in self._index:
            self._index[model] = read_models(self.path(model), model, record_key)  # type: ignore[assignment]
        return self._index[model]  # type: ignore[return-value]

    def all(self, model: type[M]) -> dict[str, M]:
        """Every record of a type by id (last one wins)."""
        with self._lock:
            return dict(self._loaded(model))

    def get(self, model: type[M], record_id: str) -> M:
        with self._lock:
            return self._loaded(model)[record_id]

    def write_clusters(self, clusters: ClusterRound) -> None:
        folder = self.dir / "clusters" / _safe(clusters.target)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"round-{clusters.round}.json").write_text(clusters.model_dump_json(indent=1), encoding="utf-8")

    def read_info(self) -> RunInfo:
        return RunInfo.model_validate_json((self.dir / "run.json").read_text(encoding="utf-8"))

    def write_info(self, info: RunInfo) -> None:
        temporary = self.dir / "run.json.tmp"
        temporary.write_text(info.model_dump_json(indent=1), encoding="utf-8")
        temporary.replace(self.dir / "run.json")

    def write_json(self, name: str, data: object) -> None:
        (self.dir / name).write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
