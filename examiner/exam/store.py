"""The exam's writer of its run directory: append-only records with an in-memory index by id.

File names, the JSONL policy and the typed readers live in examiner/core/rundir.py; this class adds
what the running exam needs on top: a lock (nodes append from concurrent tasks), one tail repair per
file before the first append, and an index so that a node can look a record up by id. The index keeps
where each record's line lies in its file (examiner/exam/recordindex.py), so a run's memory grows by
about 70 bytes per record (100,000 verdicts with 18-character ids: 72 B each, their JSON 209 B), not
the 1-2 KB of a decoded one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterable, TypeVar

from pydantic import BaseModel

from examiner.core.records import ClusterRound, RunInfo, record_key
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.exam.recordindex import RecordIndex
from examiner.exam.statestore import StateStore

M = TypeVar("M", bound=BaseModel)


class RunStore:
    """Writes records to a run directory and keeps an in-memory index of them by id."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run = RunDir(run_dir)
        self.dir = self.run.path
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._index: dict[type[BaseModel], RecordIndex[Any]] = {}
        self._repaired: set[type[BaseModel]] = set()
        self._values: StateStore | None = None

    @property
    def values(self) -> StateStore:
        """The exam graph's state store (state.sqlite), opened on first use (a paper sitting never does)."""
        with self._lock:
            if self._values is None:
                self._values = StateStore(self.dir / rundir.STATE)
            return self._values

    def close(self) -> None:
        """Close the state store if it was opened, and the indexes' files."""
        with self._lock:
            if self._values is not None:
                self._values.close()
                self._values = None
            for index in self._index.values():
                index.close()

    def path(self, model: type[BaseModel]) -> Path:
        return self.run.record_file(model)

    def append(self, records: Iterable[BaseModel]) -> None:
        """Append records (grouped by type) and index them; a record with a known id replaces it."""
        by_type: dict[type[BaseModel], list[BaseModel]] = {}
        for record in records:
            by_type.setdefault(type(record), []).append(record)
        with self._lock:
            for model, items in by_type.items():
                indexed = model in self._index
                spans = self.run.append_records(model, items, repair=model not in self._repaired)
                self._repaired.add(model)
                if indexed:
                    self._index[model].put_spans((record_key(item), span) for item, span in zip(items, spans))
                else:
                    self._loaded(model)  # reads the whole file, the lines just written included

    def _loaded(self, model: type[M]) -> RecordIndex[M]:
        if model not in self._index:
            index = RecordIndex(model, self.path(model))
            index.put_spans(self.run.record_spans(model))
            self._index[model] = index
        return self._index[model]

    def all(self, model: type[M]) -> dict[str, M]:
        """Every record of a type by id (last one wins), decoded: a copy, the caller's to change."""
        with self._lock:
            index = self._loaded(model)
        return index.decoded()

    def index(self, model: type[M]) -> Mapping[str, M]:
        """Every record of a type by id, read-only and not copied: the store's own index, which later
        appends change (iteration walks the ids present when it began)."""
        with self._lock:
            return self._loaded(model)

    def get(self, model: type[M], record_id: str) -> M:
        with self._lock:
            return self._loaded(model)[record_id]

    def write_clusters(self, clusters: ClusterRound) -> None:
        self.run.write_clusters(clusters)

    def read_info(self) -> RunInfo:
        return self.run.read_info()

    def write_info(self, info: RunInfo) -> None:
        self.run.write_info(info)

    def write_passages(self, passages: Iterable[dict[str, Any]]) -> None:
        self.run.write_passages(passages)

    def read_passages(self) -> dict[str, dict[str, Any]]:
        return self.run.read_passages()
