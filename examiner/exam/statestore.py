"""The exam's bulk state (pools, coverage, clusters, work lists) as immutable values behind short keys.

Why: LangGraph's checkpointer saves the whole graph state after every node. Holding every unit id of
every pool there made each checkpoint as large as the corpus (a 2,000-unit run wrote ~180 KB per node;
200,000 units would pass 1 GB in all). Here a value is written once, when a node produces it, under
the sha256 of its canonical JSON, and the graph state carries only that key (examiner/exam/state.py).

Why content addressing and no updates in place: a node killed after writing its values but before its
checkpoint runs again on resume, from the keys of the checkpoint before it. Those keys still name the
values it read the first time (nothing is ever overwritten), so the rerun computes the same values and
gets the same keys: nothing is counted twice. A budget-stopped run resumed from an older checkpoint
finds that checkpoint's values the same way.

Values come back shared from a small cache of decoded values: a caller must not change them in place
(copy, change, put the copy). The cache is bounded by the size of the values' JSON, not by their count:
a coverage book holds every unit of the pool (10 MB decoded at 37,423 units), and a cache of 64 values
held almost every book of a run (185 MB at 37,423 units; extrapolated, about 1 GB at 200,000).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import Any

CACHED_JSON_BYTES = 8 * 1024 * 1024
"""Decoded values kept in memory while their JSON adds up to at most this (a round reads a few per target;
the rest is on disk). The value used last is always kept, however large: a node reads its target's book
more than once. A decoded value takes about 3x its JSON."""
COMPRESSION = 1
"""zlib level: ids compress about 3x already at the fastest level, and a 200,000-unit book is written
twice a round."""


def canonical(value: Any) -> bytes:
    """The JSON a value is stored and keyed as (sorted keys, no spaces): equal values, equal keys."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class StateStore:
    """put(value) -> key and get(key) -> value over one SQLite table of zlib-compressed JSON blobs.
    Safe to share between the threads of one process."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS state_values (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        self._db.commit()
        self._cache: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._cached_bytes = 0

    def put(self, value: Any) -> str:
        """Store a JSON-like value (once: an equal value is already there under the same key); its key.
        The value is committed before the key is returned, so a checkpoint never names a missing value."""
        data = canonical(value)
        key = hashlib.sha256(data).hexdigest()
        with self._lock:
            if self._db.execute("SELECT 1 FROM state_values WHERE key = ?", (key,)).fetchone() is None:
                self._db.execute("INSERT INTO state_values VALUES (?, ?)", (key, zlib.compress(data, COMPRESSION)))
                self._db.commit()
            self._remember(key, json.loads(data), len(data))
        return key

    def get(self, key: str) -> Any:
        """The value stored under `key` (shared: do not change it in place)."""
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key][0]
            row = self._db.execute("SELECT value FROM state_values WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise KeyError(f"{self.path.name} has no value {key}")
            data = zlib.decompress(row[0])
            value = json.loads(data)
            self._remember(key, value, len(data))
            return value

    @property
    def cached_json_bytes(self) -> int:
        """JSON bytes of the values the cache holds decoded now."""
        return self._cached_bytes

    def _remember(self, key: str, value: Any, size: int) -> None:
        if key in self._cache:
            self._cached_bytes -= self._cache.pop(key)[1]
        self._cache[key] = (value, size)
        self._cached_bytes += size
        while self._cached_bytes > CACHED_JSON_BYTES and len(self._cache) > 1:
            self._cached_bytes -= self._cache.popitem(last=False)[1][1]

    def close(self) -> None:
        with self._lock:
            self._db.close()
            self._cache.clear()
            self._cached_bytes = 0
