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
  waits up to `write_wait_s` (BUSY_TIMEOUT_S) for another's lock. Identical requests from two processes at
  the same moment may both be paid (in-flight sharing is per process); either reply is kept;
- the integrity check at open could catch another process in the middle of writing the log, so a
  problem is believed (and the file set aside) only when a second look a moment later still sees it.

Why writes never stall or crash a run: a reply fetched by `get_or_fetch` is handed to the caller at once
and stored by one writer thread (pending writes go in together, one transaction), and reads run in a
worker thread, so a lock held by another process blocks no call on the event loop. A write that cannot
get the lock within the wait is a status, not an error: the reply stays in this process's memory (a
repeat of the request is still answered, not paid again), it is in the run's ledger (nothing unbilled),
`unsaved` counts it and one warning line names the cache. A later run only pays for it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import queue
import sqlite3
import threading
import time
from pathlib import Path
from collections.abc import Awaitable, Callable, Mapping

from examiner.core.config import Settings
from examiner.core import rundir
from examiner.core.sqlite_check import set_aside_if_damaged, sqlite_problem
from examiner.llm.reply import ChatReply

log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 30.0
"""How long a write (in the writer thread) or read (in a worker thread) waits for another process holding
the shared cache's lock before it gives up: a write then leaves the reply in memory only, a read is a miss."""
RECHECK_AFTER_S = 0.5
"""Pause before the second integrity check of a cache that looked damaged (see the module docstring)."""

Payload = dict[str, object]


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
    for asyncio callers. Reads and writes have a connection each, so a read never waits behind a write
    that waits for another process's lock."""

    def __init__(self, path: str | Path, *, write_wait_s: float | None = None) -> None:
        self.path = Path(path)
        self.write_wait_s = BUSY_TIMEOUT_S if write_wait_s is None else write_wait_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_file() and sqlite_problem(self.path) is not None:
            time.sleep(RECHECK_AFTER_S)  # maybe another process mid-write: only a lasting problem counts
            set_aside_if_damaged(self.path, "earlier replies will be requested (and paid) again")
        self._write_lock = threading.Lock()
        self._writer_db = self._connect()
        self._writer_db.execute("PRAGMA journal_mode=WAL")
        self._writer_db.execute("PRAGMA synchronous=NORMAL")
        self._writer_db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, payload TEXT NOT NULL, created REAL)"
        )
        self._read_lock = threading.Lock()
        self._reader_db = self._connect()
        self._held_lock = threading.Lock()
        self._held: dict[str, Payload] = {}
        """Replies not (yet) in the file: waiting for the writer, or kept after a write that failed."""
        self._queue: queue.SimpleQueue[tuple[str, Payload] | None] = queue.SimpleQueue()
        self._queued = 0
        """Payloads handed to the writer thread and not yet through a write (`flush` waits for none)."""
        self._written = threading.Condition()
        self._writer: threading.Thread | None = None
        self._inflight: dict[str, asyncio.Future[ChatReply]] = {}
        self._failed: list[tuple[str, Payload]] = []
        self.unread = 0
        """Reads that could not get at the file in time (answered as misses)."""
        self._warned = False
        self._closed = False

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                               timeout=self.write_wait_s)

    # ------------------------------------------------------------------ reads
    def get(self, key: str) -> Payload | None:
        """The stored JSON payload for `key`, if any (a reply only this process holds counts)."""
        with self._held_lock:
            held = self._held.get(key)
        if held is not None:
            return held
        try:
            with self._read_lock:
                row = self._reader_db.execute("SELECT payload FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError as exc:
            with self._held_lock:
                self.unread += 1
            self._warn(f"a lookup failed ({exc}); the request is made (and paid) again")
            return None
        if not row:
            return None
        payload: Payload = json.loads(row[0])
        return payload

    def reply(self, key: str) -> ChatReply | None:
        """The stored reply for `key`, if any."""
        payload = self.get(key)
        return ChatReply.from_payload(payload) if payload is not None else None

    # ------------------------------------------------------------------ writes
    def put(self, key: str, payload: Mapping[str, object]) -> bool:
        """Store a JSON payload under `key` (replacing what was there) now, in the caller's thread, waiting
        at most `write_wait_s` for the lock. False when it could not: the payload is then kept in memory
        and goes in with the writer thread's next transaction."""
        item = (key, dict(payload))
        with self._held_lock:
            self._held[key] = item[1]
        stored = self._write([item])
        if not stored:
            with self._held_lock:
                self._failed.append(item)
        return stored

    def put_later(self, key: str, payload: Mapping[str, object]) -> None:
        """Hand a payload to the writer thread and return at once; `get` sees it meanwhile."""
        item = (key, dict(payload))
        with self._held_lock:
            self._held[key] = item[1]
            if self._closed:
                self._failed.append(item)
                return
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_pending, name="response-cache-writer",
                                                daemon=True)
                self._writer.start()
            with self._written:
                self._queued += 1
            self._queue.put(item)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait (at most `timeout_s`) until the writer thread has been through every payload handed to it:
        records written after this never come from a reply that a kill of the process could still lose
        from the cache (a resume would pay for it again). False when the wait timed out."""
        with self._written:
            return self._written.wait_for(lambda: self._queued == 0, timeout_s)

    @property
    def unsaved(self) -> int:
        """Replies not in the file after a write failed (its lock held too long, or another SQLite error):
        in memory only, tried again with the next write."""
        with self._held_lock:
            return len(self._failed)

    def _write_pending(self) -> None:
        """The writer thread: every payload waiting, and those an earlier write failed to store, go in one
        transaction; `close` ends it after a last one."""
        while True:
            first = self._queue.get()
            stop = first is None  # what `close` puts on the queue
            batch = [] if first is None else [first]
            while not stop:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                else:
                    batch.append(item)
            queued = len(batch)
            with self._held_lock:
                batch, self._failed = self._failed + batch, []
            if batch and not self._write(batch):
                with self._held_lock:
                    self._failed = batch + self._failed
            with self._written:
                self._queued -= queued
                self._written.notify_all()
            if stop:
                return

    def _write(self, batch: list[tuple[str, Payload]]) -> bool:
        """One transaction for `batch`; a failure is warned about (once), never raised."""
        rows = [(key, json.dumps(payload), time.time()) for key, payload in batch]
        try:
            with self._write_lock:
                db = self._writer_db
                db.execute("BEGIN IMMEDIATE")  # takes the write lock, waiting at most write_wait_s
                try:
                    db.executemany("INSERT OR REPLACE INTO responses (key, payload, created) VALUES (?, ?, ?)", rows)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            self._warn(f"{len(batch)} repl{'y' if len(batch) == 1 else 'ies'} could not be stored ({exc}, "
                       f"waited {self.write_wait_s:g} s for its lock); kept in memory for this run and in its "
                       "ledger, stored with a later write if the lock is free by then")
            return False
        with self._held_lock:
            for key, payload in batch:
                if self._held.get(key) is payload:
                    del self._held[key]
        return True

    def _warn(self, what: str) -> None:
        """One warning line per cache; later troubles are only counted (`unsaved`, `unread`)."""
        if not self._warned:
            self._warned = True
            log.warning("response cache %s: %s", self.path, what)

    def status(self) -> str | None:
        """A line for the run's summary when some replies were not stored or read, else None."""
        if not (self.unsaved or self.unread):
            return None
        return (f"response cache {self.path}: {self.unsaved} repl{'y' if self.unsaved == 1 else 'ies'} not stored, "
                f"{self.unread} lookups failed (another process held its lock too long)")

    # ------------------------------------------------------------------ the asyncio side
    async def get_or_fetch(self, key: str, fetch: Callable[[], Awaitable[ChatReply]]) -> tuple[ChatReply, bool]:
        """(reply, hit). Identical concurrent requests wait for the first one instead of calling again. The
        lookup runs in a worker thread and the new reply is stored by the writer thread, so the event loop
        never waits for the file's lock."""
        with self._held_lock:
            held = self._held.get(key)
        if held is not None:
            return ChatReply.from_payload(held), True
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending), True
        future: asyncio.Future[ChatReply] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future  # before the lookup's await: a twin request arriving meanwhile waits
        hit = False
        try:
            stored = await asyncio.to_thread(self.reply, key)
            hit = stored is not None
            reply = stored if stored is not None else await fetch()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)
        if not hit:
            self.put_later(key, reply.to_payload())
        future.set_result(reply)
        return reply, hit

    def __len__(self) -> int:
        with self._read_lock:
            return int(self._reader_db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Store what waits for the writer (one last try, bounded by `write_wait_s`), then close the file;
        what even that try could not store stays counted in `unsaved`."""
        with self._held_lock:
            self._closed = True
            writer = self._writer
        if writer is not None:
            self._queue.put(None)
            writer.join()
        with self._write_lock:
            self._writer_db.close()
        with self._read_lock:
            self._reader_db.close()
