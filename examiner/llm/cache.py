"""Response cache: SQLite, keyed by a hash of everything that determines a model's reply.

A repeated request is answered from here at no cost. Concurrent identical requests share one HTTP call
(in-flight de-duplication), so a burst of the same prompt is paid once. API keys never enter the key.

A cache that fails SQLite's integrity check when opened is not trusted: it is moved aside to
`cache.sqlite.damaged` (kept for inspection), one warning says so, and a fresh cache takes its place, so a
damaged file costs repeated calls, never a crash or a wrong reply.

The cache lives in the run directory, or, with `--cache DIR` (Settings.cache_dir), in a folder that
several runs share, so a new run reuses every reply an earlier one paid for (its ledger marks them cache
hits at $0). What makes sharing safe:
- the key holds everything that decides a reply: the endpoint's identity (its URL, or the provider and
  options of a server examiner starts), the model, the messages and every request parameter
  (max_tokens, temperature, seed, n, logprobs, stop, response format); never the API key;
- concurrent processes: SQLite's write-ahead log lets readers and one writer work at once, and a writer
  waits up to BUSY_TIMEOUT_S for another's lock instead of failing. Identical requests from two
  processes at the same moment may both be paid (in-flight sharing is per process); either reply is kept;
- the integrity check at open could catch another process in the middle of writing the log, so a
  problem is believed (and the file set aside) only when a second look a moment later still sees it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from collections.abc import Awaitable, Callable, Mapping

from examiner.core.config import Settings
from examiner.core import rundir
from examiner.core.sqlite_check import set_aside_if_damaged, sqlite_problem
from examiner.llm.reply import ChatReply


BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process holding the shared cache's write lock."""
RECHECK_AFTER_S = 0.5
"""Pause before the second integrity check of a cache that looked damaged (see the module docstring)."""


def response_cache_path(settings: Settings, run_dir: Path | None) -> Path | None:
    """Where a gateway keeps its response cache: the shared folder if one is set, else the run
    directory's cache.sqlite; None when there is neither."""
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser() / rundir.CACHE
    return run_dir / rundir.CACHE if run_dir is not None else None


def cache_key(**parts: object) -> str:
    """Stable sha256 over the request parts (endpoint, model, messages, parameters, schema)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Key -> JSON payload store (a reply's payload: examiner.llm.reply) with in-flight de-duplication
    for asyncio callers."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_file() and sqlite_problem(self.path) is not None:
            time.sleep(RECHECK_AFTER_S)  # maybe another process mid-write: only a lasting problem counts
            set_aside_if_damaged(self.path, "earlier replies will be requested (and paid) again")
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                                   timeout=BUSY_TIMEOUT_S)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, payload TEXT NOT NULL, created REAL)"
        )
        self._inflight: dict[str, asyncio.Future[ChatReply]] = {}

    def get(self, key: str) -> dict[str, object] | None:
        """The stored JSON payload for `key`, if any."""
        with self._lock:
            row = self._db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        payload: dict[str, object] = json.loads(row[0])
        return payload

    def put(self, key: str, payload: Mapping[str, object]) -> None:
        """Store a JSON payload under `key` (replacing what was there)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, payload, created) VALUES (?, ?, ?)",
                (key, json.dumps(dict(payload)), time.time()),
            )

    def reply(self, key: str) -> ChatReply | None:
        """The stored reply for `key`, if any."""
        payload = self.get(key)
        return ChatReply.from_payload(payload) if payload is not None else None

    async def get_or_fetch(self, key: str, fetch: Callable[[], Awaitable[ChatReply]]) -> tuple[ChatReply, bool]:
        """(reply, hit). Identical concurrent requests wait for the first one instead of calling again."""
        stored = self.reply(key)
        if stored is not None:
            return stored, True
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending), True
        future: asyncio.Future[ChatReply] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            reply = await fetch()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)
        self.put(key, reply.to_payload())
        future.set_result(reply)
        return reply, False

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
