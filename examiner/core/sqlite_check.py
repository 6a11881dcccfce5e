"""Whether a SQLite file a run kept (response cache, checkpoints) can be trusted before it is used.

Why: SQLite opens a damaged file without complaint and fails later, mid-run, with a traceback; a
file that is not a database at all only fails at the first query. A quick check up front turns both
into one line naming the file.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


def sqlite_problem(path: str | Path) -> str | None:
    """Why the existing SQLite file at `path` is damaged, or None when `PRAGMA quick_check` passes."""
    try:
        with closing(sqlite3.connect(str(path))) as db:
            rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc) or type(exc).__name__
    problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
    return problems[0] if problems else None


__all__ = ["sqlite_problem"]
