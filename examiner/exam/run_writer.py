"""The exam's writer of its run directory: append-only records with an in-memory index by id.

File names, the JSONL policy and the typed readers live in examiner/core/rundir.py; this class adds
what the running exam needs on top: a lock (nodes append from concurrent tasks), one tail repair per
file before the first append, and an index so that a node can look a record up by id. The index keeps
where each record's line lies in its file (examiner/exam/recordindex.py), so a run's memory grows by
about 70 bytes per record (100,000 verdicts with 18-character ids: 72 B each, their JSON 209 B), not
the 1-2 KB of a decoded one.

Records are written once per id: a node that a resume runs again after a kill skips what it already
wrote and replaces what changed (see `append`), so the files hold each id on one line, as an
uninterrupted run's do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
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
        """Record types this store appended to (their tails repaired first)."""
        self._stale: set[type[BaseModel]] = set()
        """Record types whose file holds some id on more than one line (rewritten at `close`)."""
        self._values: StateStore | None = None
        self._held: dict[type[BaseModel], dict[str, str]] = {}
        """Records `hold` keeps back for `release`, as their JSON lines by id (visible to `get` meanwhile)."""
        self.before_append: Callable[[], object] | None = None
        """Called before records go to a file. The runner sets it to the response cache's `flush`: no record
        on disk then comes from a reply that a kill of the process could still lose from the cache (the
        cache stores replies from a writer thread), so a resume never pays for the reply again."""

    @property
    def values(self) -> StateStore:
        """The exam graph's state store (state.sqlite), opened on first use (a paper sitting never does)."""
        with self._lock:
            if self._values is None:
                self._values = StateStore(self.dir / rundir.STATE)
            return self._values

    def close(self) -> None:
        """Close the state store if it was opened, and the indexes' files. A record file that holds an
        id on more than one line (a record replaced in this run, or a file written before records were
        kept once) is first rewritten with one line per id, when this store appended to it."""
        with self._lock:
            if self._values is not None:
                self._values.close()
                self._values = None
            for model in sorted(self._stale & self._repaired, key=lambda m: m.__name__):
                self._index[model].compact()
            self._stale.clear()
            for index in self._index.values():
                index.close()

    def path(self, model: type[BaseModel]) -> Path:
        return self.run.record_file(model)

    def append(self, records: Iterable[BaseModel]) -> None:
        """Append records (grouped by type) and index them, each id once: a record whose id the file
        already holds with the same content is skipped (a node that a resume runs again after a kill
        writes what it wrote before), one with other content replaces it (appended now, the older line
        removed when the store closes; every reader takes the last line of an id meanwhile)."""
        by_type: dict[type[BaseModel], dict[str, str]] = {}
        for record in records:  # the last of an id wins
            by_type.setdefault(type(record), {})[record_key(record)] = record.model_dump_json()
        for model, lines in by_type.items():
            self.append_lines(model, lines)

    def append_lines(self, model: type[BaseModel], lines: dict[str, str]) -> None:
        """`append` of one type's records already serialised: each record's `model_dump_json()` by its id
        (every write to a record file goes through here, `append`'s and `release`'s)."""
        if lines and self.before_append is not None:
            self.before_append()
        with self._lock:
            index = self._loaded(model)
            items = [(key, line) for key, line in lines.items()
                     if key not in index or index.raw(key) != line.encode("utf-8")]
            if not items:
                return
            if any(key in index for key, _ in items):
                self._stale.add(model)
            spans = self.run.append_lines(model, [line for _, line in items], repair=model not in self._repaired)
            self._repaired.add(model)
            index.put_spans((key, span) for (key, _), span in zip(items, spans))

    def _loaded(self, model: type[M]) -> RecordIndex[M]:
        if model not in self._index:
            index = RecordIndex(model, self.path(model))
            lines = 0
            for key, span in self.run.record_spans(model):
                index.put_span(key, span)
                lines += 1
            if lines > len(index):  # an id on several lines: a run written before records were kept once
                self._stale.add(model)
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
        """A record by id: one held back by `hold`, else the file's."""
        with self._lock:
            held = self._held.get(model, {}).get(record_id)
            if held is None:
                return self._loaded(model)[record_id]
        return model.model_validate_json(held)

    def hold(self, records: Iterable[BaseModel]) -> None:
        """Keep records back from the files until `release`, visible to `get` meanwhile (not to `all` or
        `index`). Why: work done concurrently finishes in any order, and the files should not say which,
        so a run writes the same bytes whatever the timing (the streaming exam node holds a round's
        records and releases them in the order a staged exam wrote them).

        A record is held as the JSON line it will be written as, and decoded again by `get`: round 1 of a
        200,000-unit exam holds about 350,000 records, 1.3 to 2.1 KB each decoded, 0.2 to 1 KB as lines."""
        lines = [(type(record), record_key(record), record.model_dump_json()) for record in records]
        with self._lock:
            for model, key, line in lines:
                self._held.setdefault(model, {})[key] = line

    def release(self, order: Callable[[BaseModel], Any]) -> None:
        """Append every held record, each type's in the order `order` gives (a sort key over the record,
        decoded one at a time; records of equal keys as they were held), and hold none."""
        with self._lock:
            held, self._held = self._held, {}
        for model, lines in held.items():
            ordered = sorted(lines.items(), key=lambda item: order(model.model_validate_json(item[1])))
            self.append_lines(model, dict(ordered))

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
