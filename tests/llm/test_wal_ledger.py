"""The write-ahead ledger: every request is recorded as started before it is sent, so a kill -9 leaves
calls whose outcome is unknown visible with their worst case, and a resume reconciles the ones whose
reply reached the response cache. Checked against what a standalone simulated server billed."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core import rundir
from examiner.core.ledger_record import LedgerRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm import Gateway
from examiner.llm.ledger import (STARTED, answered, in_flight, in_flight_usd, known_usd, outcomes, possibly_billed,
                                 possibly_billed_usd, spent_usd, torn_lines)
from examiner.simulator.process import SimulatedProcess
from tests.helpers.killing import kill_examiner_when
from tests.helpers.simulated_exam import PROFILE, ROLES, sim_settings

CORPUS = [str(p) for p in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:2]]
"""About 20 knowledge units, 42 paid requests for an uninterrupted simulated exam."""
PRICE_IN, PRICE_OUT = 2.5, 10.0
KILLS = 5
GROWTH = 10
"""Ledger lines a process writes before it is killed: 5 kills at 5 different ledger lengths."""


def test_started_record_without_outcome_is_in_flight_and_counted_at_its_worst_case() -> None:
    records = [
        LedgerRecord.build(call_id="a", outcome=STARTED, worst_case_usd=0.5),
        LedgerRecord.build(call_id="a", outcome="ok", cost_usd=0.1),
        LedgerRecord.build(call_id="a", repair=1, outcome=STARTED, worst_case_usd=0.5),  # its re-ask, killed
        LedgerRecord.build(call_id="b", outcome=STARTED, worst_case_usd=0.25),
        LedgerRecord.build(call_id="b", outcome="failed", cost_usd=0.0),
        LedgerRecord.build(call_id="c", outcome="ok", cache_hit=True, cost_usd=0.0),
        LedgerRecord.build(call_id="d", cost_usd=0.2),  # a ledger written before the write-ahead records
    ]
    assert [r.repair for r in in_flight(records)] == [1]
    assert known_usd(records) == pytest.approx(0.3)
    assert in_flight_usd(records) == pytest.approx(0.5)
    assert spent_usd(records) == pytest.approx(0.8)
    assert len(outcomes(records)) == 4 and len(answered(records)) == 3


def test_a_reply_cached_before_the_kill_is_reconciled_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kill while the outcome record was being written: the line is torn, the reply is in the cache.
    `examiner cost` shows the call in flight and the torn line; a resume reconciles it with its real cost,
    once, and the run's spending is again what was paid."""
    settings = sim_settings(max_rounds=1)
    asyncio.run(start_exam(settings, ExamRequest(list(CORPUS[:1])), tmp_path, quiet=True, report=False))
    ledger = tmp_path / rundir.LEDGER
    lines = ledger.read_text(encoding="utf-8").splitlines()
    last = max(i for i, line in enumerate(lines) if json.loads(line)["outcome"] == "ok"
               and not json.loads(line)["cache_hit"])
    paid = json.loads(lines[last])
    paid_total = known_usd(RunDir(tmp_path).ledger_records())
    ledger.write_text("\n".join(lines[:last] + lines[last + 1:]) + "\n" + lines[last][:40], encoding="utf-8")

    assert main(["cost", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "possibly billed (killed in flight, or sent and the reply late, cut or dropped): 1 calls" in out
    assert "1 killed in flight not settled yet" in out
    assert "torn ledger lines: 1" in out
    before = RunDir(tmp_path).ledger_records()
    assert known_usd(before) == pytest.approx(paid_total - paid["cost_usd"])
    assert spent_usd(before) > paid_total, "the unknown call counts at its worst case"

    async def resume_twice() -> tuple[int, int, float]:
        async with Gateway(settings, tmp_path) as gw:
            first = gw.resume_spending()
        async with Gateway(settings, tmp_path) as gw:
            return first, gw.resume_spending(), gw.budget.spent_usd

    first, second, spent = asyncio.run(resume_twice())
    assert (first, second) == (1, 0)
    after = RunDir(tmp_path).ledger_records()
    (reconciled,) = [r for r in after if r.outcome == "reconciled"]
    for name in ("call_id", "role", "stage", "request_id", "prompt_tokens", "completion_tokens", "cost_usd"):
        assert getattr(reconciled, name) == paid[name], name
    assert not in_flight(after) and spent == pytest.approx(paid_total) == known_usd(after)
    assert torn_lines(tmp_path) == 1, "the torn fragment is kept in ledger.jsonl.torn and still counted"


def billed_usd(billed: dict[str, list[int]], ids: set[str] | None = None) -> float:
    """Dollars of the server's billed replies (all, or those with the given ids)."""
    return sum(p * PRICE_IN / 1e6 + c * PRICE_OUT / 1e6 for rid, (p, c) in billed.items() if ids is None or rid in ids)


def run_until_killed(command: list[str], ledger: Path) -> None:
    """Start an `examiner` subprocess and SIGKILL it once its ledger has grown by GROWTH lines."""
    start = len(ledger.read_bytes().splitlines()) if ledger.exists() else 0
    kill_examiner_when([*command, "--quiet"],
                       lambda: ledger.exists() and len(ledger.read_bytes().splitlines()) >= start + GROWTH,
                       too_late="the process finished before it could be killed")


def test_kill_at_five_points_the_ledger_bounds_what_the_server_billed(tmp_path: Path) -> None:
    """`examiner run`, then `examiner resume` four times, each killed with -9 at a longer ledger; a last
    resume finishes. After each kill: the ledger's known dollars equal the server's bill for the replies
    the ledger has outcomes for, and known plus the worst case of the calls killed in flight (settled
    `unknown` by the resumes, or not yet settled) bound the whole bill from above. No reply known to the
    ledger is paid again by a resume, and after the last one no call is left unsettled."""
    with SimulatedProcess(options={"knowledge": PROFILE, "latency_s": 0.05}) as url:
        endpoint = EndpointSpec(provider="openai", base_url=url, model="sim", price_input_per_1m=PRICE_IN,
                                price_output_per_1m=PRICE_OUT, max_concurrency=16)
        settings = Settings(endpoints={"sim": endpoint}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": 5})
        config = tmp_path / "config.yaml"
        config.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
        run_dir = tmp_path / "run"
        ledger = run_dir / rundir.LEDGER

        def stats() -> dict[str, Any]:
            time.sleep(0.3)  # a handler the kill did not cancel finishes (and bills) first
            return httpx.get(url.removesuffix("/v1") + "/sim/stats", timeout=10).json()

        points: list[dict[str, Any]] = []
        known_ids: set[str] = set()
        for kill in range(KILLS):
            command = ["run", *CORPUS, "--config", str(config), "--out", str(run_dir)] if kill == 0 else \
                ["resume", str(run_dir)]
            run_until_killed(command, ledger)
            billed = stats()["billed"]
            records = RunDir(run_dir).ledger_records()
            paid = [r for r in answered(records) if not r.cache_hit]
            ids = {r.request_id for r in paid}
            assert len(ids) == len(paid) and known_ids <= ids and ids <= set(billed)
            assert all(r.request_id not in known_ids for r in paid[len(known_ids):]), "a known call was paid twice"
            known_ids = ids
            point = {"lines": len(records), "known_usd": known_usd(records), "in_flight": len(possibly_billed(records)),
                     "in_flight_usd": possibly_billed_usd(records), "billed_usd": billed_usd(billed),
                     "billed_unknown": len(set(billed) - ids), "reconciled": sum(r.outcome == "reconciled" for r in records)}
            points.append(point)
            assert point["known_usd"] == pytest.approx(billed_usd(billed, ids), rel=1e-9)
            assert point["billed_unknown"] <= point["in_flight"]
            assert point["billed_usd"] <= point["known_usd"] + point["in_flight_usd"] + 1e-12

        assert main(["resume", str(run_dir), "--quiet"]) == 0
        billed = stats()["billed"]
        records = RunDir(run_dir).ledger_records()
        paid_ids = [r.request_id for r in answered(records) if not r.cache_hit]
        assert len(paid_ids) == len(set(paid_ids)) and known_ids <= set(paid_ids)
        assert known_usd(records) == pytest.approx(billed_usd(billed, set(paid_ids)), rel=1e-9)
        assert billed_usd(billed) <= known_usd(records) + possibly_billed_usd(records) + 1e-12
        assert not in_flight(records), "the last resume settled every call killed in flight"
    print("\nkill points (ledger lines, known $, in flight, worst case $, server billed $, billed without outcome, reconciled):")
    for p in points:
        print(f"  {p['lines']:4d}  {p['known_usd']:.6f}  {p['in_flight']:2d}  {p['in_flight_usd']:.6f}  "
              f"{p['billed_usd']:.6f}  {p['billed_unknown']}  {p['reconciled']}")
    print(f"  final: known {known_usd(records):.6f}, possibly billed {len(possibly_billed(records))} "
          f"(up to {possibly_billed_usd(records):.6f}), server billed {billed_usd(billed):.6f}")
