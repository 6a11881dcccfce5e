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
(copy, change, put the copy).
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

CACHED_VALUES = 64
"""Decoded values kept in memory (a round reads a few per target; the rest is on disk)."""
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
        self._cache: OrderedDict[str, Any] = OrderedDict()

    def put(self, value: Any) -> str:
        """Store a JSON-like value (once: an equal value is already there under the same key); its key.
        The value is committed before the key is returned, so a checkpoint never names a missing value."""
        data = canonical(value)
        key = hashlib.sha256(data).hexdigest()
        with self._lock:
            if self._db.execute("SELECT 1 FROM state_values WHERE key = ?", (key,)).fetchone() is None:
                self._db.execute("INSERT INTO state_values VALUES (?, ?)", (key, zlib.compress(data, COMPRESSION)))
                self._db.commit()
            self._remember(key, json.loads(data))
        return key

    def get(self, key: str) -> Any:
        """The value stored under `key` (shared: do not change it in place)."""
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            row = self._db.execute("SELECT value FROM state_values WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise KeyError(f"{self.path.name} has no value {key}")
            value = json.loads(zlib.decompress(row[0]))
            self._remember(key, value)
            return value

    def _remember(self, key: str, value: Any) -> None:
        self._cache[key] = value
        self._cache.move_to_end(key)
        while len(self._cache) > CACHED_VALUES:
            self._cache.popitem(last=False)

    def close(self) -> None:
        with self._lock:
            self._db.close()
            self._cache.clear()
