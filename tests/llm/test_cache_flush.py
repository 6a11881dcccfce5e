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


async def test_a_call_is_recorded_ok_only_once_its_reply_is_in_the_cache_file(tmp_path: Path,
                                                                              monkeypatch) -> None:
    """The order a kill relies on: a reply is in the cache's file before the ledger says the call was
    answered. A kill between the two then leaves the call in flight, which a resume reconciles from the
    cache (or marks possibly billed); the reverse order left answered calls whose replies a resume could not
    find and paid for again (seen as a flaky kill-and-resume test under load). The writer thread is slowed
    so that the old order shows."""
    import time

    from examiner.core.config import EndpointSpec, Settings
    from examiner.llm import Gateway, GenerationConfig
    from examiner.llm.accounting import Accounting
    from examiner.simulator import SimulatedServer

    write = ResponseCache._write

    def slow_write(self: ResponseCache, batch: list) -> bool:
        time.sleep(0.2)
        return write(self, batch)

    monkeypatch.setattr(ResponseCache, "_write", slow_write)
    in_file_at_record: list[int] = []
    record = Accounting.record

    def watched(self: Accounting, spec, result, meta, **kwargs) -> None:  # type: ignore[no-untyped-def]
        if not result.cache_hit:
            in_file_at_record.append(len(gateway.cache))
        record(self, spec, result, meta, **kwargs)

    monkeypatch.setattr(Accounting, "record", watched)
    server = SimulatedServer(options={}, seed=0)
    url = server.start()
    try:
        settings = Settings(endpoints={"sim": EndpointSpec(provider="simulated", base_url=url, model="sim")},
                            roles={r: "sim" for r in ("examiner", "candidate", "judge")})
        async with Gateway(settings, tmp_path) as gateway:
            for i in range(3):
                await gateway.chat("candidate", [{"role": "user", "content": f"question {i}"}],
                                   GenerationConfig(max_tokens=8))
    finally:
        server.stop()
    assert in_file_at_record == [1, 2, 3]
