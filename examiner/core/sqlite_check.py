"""Whether a SQLite file a run kept (response cache, checkpoints) can be trusted before it is used.

Why: SQLite opens a damaged file without complaint and fails later, mid-run, with a traceback; a
file that is not a database at all only fails at the first query. A quick check up front turns both
into one line naming the file: an error for a file the run cannot go on without (checkpoints), or, for a
cache that can be rebuilt, a warning and the file set aside.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path

log = logging.getLogger(__name__)


def sqlite_problem(path: str | Path) -> str | None:
    """Why the existing SQLite file at `path` is damaged, or None when `PRAGMA quick_check` passes."""
    try:
        with closing(sqlite3.connect(str(path))) as db:
            rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc) or type(exc).__name__
    problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
    return problems[0] if problems else None


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


__all__ = ["set_aside_if_damaged", "sqlite_problem"]
