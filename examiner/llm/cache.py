"""Response cache: SQLite, keyed by a hash of everything that determines a model's reply.

A repeated request is answered from here at no cost. Concurrent identical requests share one HTTP call
(in-flight de-duplication), so a burst of the same prompt is paid once. API keys never enter the key.

A cache that fails SQLite's integrity check when opened is not trusted: it is moved aside to
`cache.sqlite.damaged` (kept for inspection), one warning says so, and a fresh cache takes its place, so a
damaged file costs repeated calls, never a crash or a wrong reply.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from examiner.core.sqlite_check import set_aside_if_damaged


def cache_key(**parts: Any) -> str:
    """Stable sha256 over the request parts (endpoint, model, messages, parameters, schema)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Key -> JSON payload store with in-flight de-duplication for asyncio callers."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        set_aside_if_damaged(self.path, "earlier replies will be requested (and paid) again")
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, payload TEXT NOT NULL, created REAL)"
        )
        self._inflight: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, payload: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, payload, created) VALUES (?, ?, ?)",
                (key, json.dumps(payload), time.time()),
            )

    async def get_or_fetch(
        self, key: str, fetch: Callable[[], Awaitable[dict[str, Any]]]
    ) -> tuple[dict[str, Any], bool]:
        """(payload, hit). Identical concurrent requests wait for the first one instead of calling again."""
        stored = self.get(key)
        if stored is not None:
            return stored, True
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending), True
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            payload = await fetch()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)
        self.put(key, payload)
        future.set_result(payload)
        return payload, False

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
