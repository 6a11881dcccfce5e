"""`--cache DIR`: a response cache shared between runs, so a new run pays nothing for calls already paid."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.llm import Gateway, GenerationConfig
from examiner.llm import cache as cache_module
from examiner.llm.cache import ResponseCache, cache_key, response_cache_path
from examiner.llm.ledger import answered, spent_usd
from tests.helpers.paid_runs import CORPUS, paid_bodies
from tests.helpers.simulated_exam import outcomes_of, sim_settings, write_config


def test_second_run_with_the_same_cache_pays_nothing(tmp_path: Path) -> None:
    """The first run fills DIR/cache.sqlite (none in its run directory); a second run in a new directory
    answers every call from it: all ledger records are cache hits at $0, with the first run's outcomes."""
    config, shared = write_config(tmp_path), tmp_path / "shared-cache"
    first, second = tmp_path / "first", tmp_path / "second"
    for run_dir in (first, second):
        assert main(["run", *CORPUS, "--config", str(config), "--cache", str(shared), "--out", str(run_dir),
                     "--quiet"]) == 0
    assert (shared / rundir.CACHE).is_file() and not (first / rundir.CACHE).exists()
    assert yaml.safe_load((second / rundir.CONFIG).read_text())["cache_dir"] == str(shared.resolve())
    assert paid_bodies(first), "the first run made paid calls"
    records = answered(RunDir(second).ledger_records())
    assert records and all(r.cache_hit for r in records)
    assert paid_bodies(second) == [] and spent_usd(RunDir(second).ledger_records()) == 0
    assert {k: o.status for k, o in outcomes_of(second).items()} == {k: o.status for k, o in outcomes_of(first).items()}


def test_resume_can_move_a_run_onto_a_shared_cache(tmp_path: Path) -> None:
    """`resume --cache DIR` records the shared cache in config.yaml, so later resumes keep using it."""
    config, shared = write_config(tmp_path), tmp_path / "shared"
    run_dir = tmp_path / "run"
    assert main(["run", *CORPUS, "--config", str(config), "--budget-usd", "0.02", "--out", str(run_dir), "--quiet"]) == 3
    assert main(["resume", str(run_dir), "--budget-usd", "1", "--cache", str(shared), "--quiet"]) == 0
    assert yaml.safe_load((run_dir / rundir.CONFIG).read_text())["cache_dir"] == str(shared.resolve())
    assert (shared / rundir.CACHE).is_file()


def test_cache_flag_must_name_a_usable_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["run", *CORPUS, "--simulate", "--cache", str(blocker / "sub"), "--out", str(tmp_path / "r")]) != 0
    assert "--cache" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_cache_path_follows_the_settings(tmp_path: Path) -> None:
    settings = sim_settings()
    assert response_cache_path(settings, tmp_path) == tmp_path / rundir.CACHE
    assert response_cache_path(settings, None) is None
    shared = settings.merged({"cache_dir": str(tmp_path / "c")})
    assert response_cache_path(shared, tmp_path / "run") == tmp_path / "c" / rundir.CACHE


def test_key_separates_endpoints_models_and_parameters() -> None:
    """Two runs share replies only for the very same request: another endpoint, model or any generation
    parameter is another key."""
    base = dict(endpoint="https://a.example/v1", model="m", messages=[{"role": "user", "content": "q"}],
                request={"max_tokens": 10, "temperature": 0.0, "n": 1})
    keys = {cache_key(**base)}
    for change in ({"endpoint": "https://b.example/v1"}, {"model": "m2"},
                   {"request": {"max_tokens": 11, "temperature": 0.0, "n": 1}},
                   {"request": {"max_tokens": 10, "temperature": 0.7, "n": 1}},
                   {"request": {"max_tokens": 10, "temperature": 0.0, "n": 1, "seed": 1}}):
        keys.add(cache_key(**{**base, **change}))
    assert len(keys) == 6


def test_two_open_handles_share_one_file(tmp_path: Path) -> None:
    """Two processes' handles on one shared cache see each other's replies (WAL mode, busy timeout)."""
    path = tmp_path / rundir.CACHE
    a, b = ResponseCache(path), ResponseCache(path)
    try:
        a.put("k1", {"texts": ["one"]})
        b.put("k2", {"texts": ["two"]})
        assert b.get("k1") == {"texts": ["one"]} and a.get("k2") == {"texts": ["two"]}
        assert a._writer_db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        a.close()
        b.close()


async def test_a_cache_locked_by_another_process_costs_a_warning_not_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Another process holds the shared cache's write lock past the wait: the paid reply still reaches its
    caller, a second call is answered meanwhile (the write waits in its own thread, not on the event loop),
    a repeat of the first call is a hit from memory, one warning names the cache, and the reply is stored
    once the lock is free."""
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 2.0)
    shared, run_dir = tmp_path / "shared", tmp_path / "run"
    settings = sim_settings().merged({"cache_dir": str(shared)})
    ask = [{"role": "user", "content": "Name one fact about zebrafish."}]
    other = [{"role": "user", "content": "Name one fact about quokkas."}]
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    with caplog.at_level(logging.WARNING):
        async with Gateway(settings, run_dir) as gw:
            assert gw.cache is not None
            holder = sqlite3.connect(str(shared / rundir.CACHE), isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")  # another process's write lock
            beat = asyncio.create_task(ticker())
            first = await gw.chat("judge", ask, GenerationConfig(max_tokens=16))
            assert first.text and not first.cache_hit
            second = await gw.chat("judge", other, GenerationConfig(max_tokens=16))
            assert second.text and not second.cache_hit
            assert gw.cache.unsaved == 0, "the second call waited for the first one's write"
            seen = ticks
            while gw.cache.unsaved == 0:  # the writer gives up after the wait
                await asyncio.sleep(0.05)
            assert ticks > seen, "the event loop stalled while the write waited for the lock"
            again = await gw.chat("judge", ask, GenerationConfig(max_tokens=16))
            assert again.cache_hit and again.text == first.text
            assert gw.cache.status() is not None and str(shared / rundir.CACHE) in (gw.cache.status() or "")
            beat.cancel()
            holder.execute("ROLLBACK")
            holder.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and str(shared / rundir.CACHE) in warnings[0], warnings
    stored = ResponseCache(shared / rundir.CACHE)
    try:
        assert len(stored) == 2, "the replies the locked write left in memory went in once the lock was free"
    finally:
        stored.close()
    records = answered(RunDir(run_dir).ledger_records())
    assert [r.cache_hit for r in records] == [False, False, True]


async def test_replies_still_unsaved_at_close_are_said_once_the_gateway_closes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The shared cache stays locked by another process past the gateway's close: the reply the last write
    could not store is counted in `cache_status` and said in one warning line naming the cache."""
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.2)
    shared = tmp_path / "shared"
    settings = sim_settings().merged({"cache_dir": str(shared)})
    holder: sqlite3.Connection | None = None
    try:
        with caplog.at_level(logging.WARNING):
            async with Gateway(settings, tmp_path / "run") as gw:
                holder = sqlite3.connect(str(shared / rundir.CACHE), isolation_level=None)
                holder.execute("BEGIN EXCLUSIVE")
                reply = await gw.chat("judge", [{"role": "user", "content": "Name one fact about axolotls."}],
                                      GenerationConfig(max_tokens=16))
                assert reply.text and not reply.cache_hit
    finally:
        if holder is not None:
            holder.execute("ROLLBACK")
            holder.close()
    assert gw.cache_status is not None and "1 reply not stored" in gw.cache_status
    closing = [r.getMessage() for r in caplog.records
               if r.levelno >= logging.WARNING and "a later run pays for those again" in r.getMessage()]
    assert len(closing) == 1 and str(shared / rundir.CACHE) in closing[0], closing


async def test_a_gateway_whose_cache_stored_everything_says_nothing(tmp_path: Path) -> None:
    async with Gateway(sim_settings().merged({"cache_dir": str(tmp_path / "shared")}), tmp_path / "run") as gw:
        await gw.chat("judge", [{"role": "user", "content": "Name one fact about axolotls."}],
                      GenerationConfig(max_tokens=16))
    assert gw.cache_status is None
