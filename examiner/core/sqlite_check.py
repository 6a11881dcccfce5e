"""Whether a SQLite file a run kept (response cache, checkpoints) can be trusted before it is used.

Why: SQLite opens a damaged file without complaint and fails later, mid-run, with a traceback; a
file that is not a database at all only fails at the first query. A quick check up front turns both
into one line naming the file: an error for a file the run cannot go on without (checkpoints), or, for a
cache that can be rebuilt, a warning and the file set aside.
"""

from __future__ import annotations

import logging
import sqlite3
import struct
from contextlib import closing
from pathlib import Path

log = logging.getLogger(__name__)


def sqlite_problem(path: str | Path) -> str | None:
    """Why the existing SQLite file at `path` is damaged, or None when its write-ahead log is sound and
    `PRAGMA quick_check` passes. The log is read first: opening the database would replay it, silently
    dropping every transaction behind a damaged frame, and closing it would delete the evidence."""
    problem = wal_problem(Path(f"{path}-wal"))
    if problem is not None:
        return problem
    try:
        with closing(sqlite3.connect(str(path))) as db:
            rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc) or type(exc).__name__
    problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
    return problems[0] if problems else None


_WAL_MAGIC = {0x377F0682: "<", 0x377F0683: ">"}
"""WAL header magic -> byte order of the checksum words (https://www.sqlite.org/fileformat.html#walformat)."""


def _wal_checksum(data: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def wal_problem(wal: Path) -> str | None:
    """Why a write-ahead log left beside a database is damaged, or None (also when there is none).

    SQLite stops reading a log at the first frame whose checksum fails and ignores the rest without a
    word. A killed writer can only leave its last frame torn; a bad frame followed by more frames of the
    same log generation (same salts), or a log whose header does not check, is damage."""
    if not wal.is_file() or wal.stat().st_size < 32:
        return None
    data = wal.read_bytes()
    magic, _version, page_size, _sequence, salt1, salt2, c0, c1 = struct.unpack(">8I", data[:32])
    order = _WAL_MAGIC.get(magic)
    if order is None or _wal_checksum(data[:24], order, 0, 0) != (c0, c1):
        return f"{wal.name}: the write-ahead log's header is damaged"
    frame = 24 + page_size
    s0, s1 = c0, c1
    bad_frame: int | None = None
    for number, start in enumerate(range(32, len(data) - frame + 1, frame), start=1):
        header = data[start:start + 24]
        if struct.unpack(">2I", header[8:16]) != (salt1, salt2):
            continue  # a frame of an earlier generation of the log, which SQLite ignores by design
        if bad_frame is not None:
            return f"{wal.name}: frame {bad_frame} of the write-ahead log is damaged, frames after it would be lost"
        s0, s1 = _wal_checksum(header[:8] + data[start + 24:start + frame], order, s0, s1)
        if (s0, s1) != struct.unpack(">2I", header[16:24]):
            bad_frame = number
    return None


def set_aside_if_damaged(path: Path, consequence: str) -> Path | None:
    """Move a damaged cache file (with its WAL and shared-memory files) to `<name>.damaged`, warning once
    with what rebuilding it costs; returns where it went, or None when the file is absent or sound."""
    if not path.is_file():
        return None
    problem = sqlite_problem(path)
    if problem is None:
        return None
    aside = path.with_name(path.name + ".damaged")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.replace(aside.with_name(aside.name + suffix))
    log.warning("%s is damaged (%s): moved to %s; continuing with an empty one (%s)", path, problem, aside.name,
                consequence)
    return aside


__all__ = ["set_aside_if_damaged", "sqlite_problem", "wal_problem"]
