"""`ResponseCache.flush`: once it returns, every reply handed to the writer thread is in the file, so a
process killed right after writing records made from those replies loses none of them (its resume reads
them from the cache instead of paying for them again)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from examiner.llm.cache import ResponseCache


def test_flush_returns_once_every_queued_reply_is_in_the_file(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for i in range(50):
        cache.put_later(f"k{i}", {"text": f"reply {i}"})
    assert cache.flush(timeout_s=30)
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:  # another reader, as a resumed process is
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 50
    assert cache.flush(timeout_s=0.01)  # nothing waits: returns at once
    cache.close()
