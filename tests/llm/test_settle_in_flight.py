"""Calls in flight at a kill are settled when the run resumes: reconciled from the response cache where
their reply arrived, otherwise given an `unknown` outcome that keeps their worst case apart. From then on
they are "possibly billed": shown apart by `examiner cost` and the report, and still held against the
budget at their worst case (the provider may have billed them). `cancelled` outcomes (calls stopped after they were sent, before a reply) are read and shown apart
too, and held against the budget at their worst case (they may have been billed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core import rundir
from examiner.core.ledger_record import LedgerRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm import Gateway
from examiner.llm.ledger import (STARTED, cancelled, cancelled_usd, in_flight, in_flight_usd, known_usd,
                                 possibly_billed, possibly_billed_usd, spent_usd)
from tests.helpers.simulated_exam import sim_settings

CORPUS = ["corpora/examiner-handbook/01-exam.md"]


def test_unknown_and_cancelled_outcomes_are_counted_apart() -> None:
    records = [
        LedgerRecord.build(call_id="a", outcome=STARTED, worst_case_usd=0.5),
        LedgerRecord.build(call_id="a", outcome="ok", cost_usd=0.1),
        LedgerRecord.build(call_id="b", outcome=STARTED, worst_case_usd=0.25),
        LedgerRecord.build(call_id="b", outcome="unknown", worst_case_usd=0.25, cost_usd=0.0),
        LedgerRecord.build(call_id="c", outcome=STARTED, worst_case_usd=0.125),
        LedgerRecord.build(call_id="c", outcome="cancelled", worst_case_usd=0.125, cost_usd=0.0),
        LedgerRecord.build(call_id="d", outcome=STARTED, worst_case_usd=0.0625),  # killed, not yet settled
    ]
    assert [r.call_id for r in in_flight(records)] == ["d"]
    assert in_flight_usd(records) == pytest.approx(0.0625)
    assert [r.call_id for r in possibly_billed(records)] == ["b", "d"]
    assert possibly_billed_usd(records) == pytest.approx(0.3125)
    assert [r.call_id for r in cancelled(records)] == ["c"] and cancelled_usd(records) == pytest.approx(0.125)
    assert known_usd(records) == pytest.approx(0.1)
    assert spent_usd(records) == pytest.approx(0.5375), "every call that may have been billed is held"


def killed_in_flight(run_dir: Path, *, cached: bool) -> dict:
    """A finished run whose ledger gets the `started` record of a call killed in flight: one whose reply
    reached the cache (its last paid call, outcome removed) or one whose reply never came."""
    ledger = run_dir / rundir.LEDGER
    rows = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    if cached:
        last = max(i for i, r in enumerate(rows) if r["outcome"] == "ok" and not r["cache_hit"])
        killed = rows.pop(last)
    else:
        killed = {"call_id": "killed000001", "role": "judge", "stage": "judge", "round": 1, "unit_ids": ["u"],
                  "item_id": "", "endpoint": "sim", "model": "sim", "outcome": STARTED, "worst_case_usd": 0.0118,
                  "cache_key": "no-such-key"}
        rows.append(killed)
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return killed


def test_resume_settles_every_call_in_flight_and_keeps_its_worst_case(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    settings = sim_settings(max_rounds=1)
    asyncio.run(start_exam(settings, ExamRequest(list(CORPUS)), tmp_path, quiet=True, report=False))
    paid = known_usd(RunDir(tmp_path).ledger_records())
    killed_in_flight(tmp_path, cached=False)
    before = RunDir(tmp_path).ledger_records()
    assert len(in_flight(before)) == 1 and spent_usd(before) == pytest.approx(paid + 0.0118)

    async def resume_twice() -> tuple[int, float, int]:
        async with Gateway(settings, tmp_path) as gw:
            gw.resume_spending()
        async with Gateway(settings, tmp_path) as gw:
            gw.resume_spending()
            return len(RunDir(tmp_path).ledger_records()), gw.budget.spent_usd, gw.budget.reserved_usd

    lines, spent, reserved = asyncio.run(resume_twice())
    after = RunDir(tmp_path).ledger_records()
    assert lines == len(before) + 1, "one `unknown` outcome, written once"
    (unknown,) = [r for r in after if r.outcome == "unknown"]
    assert unknown.call_id == "killed000001" and unknown.worst_case_usd == 0.0118 and unknown.cost_usd == 0
    assert not in_flight(after)
    assert spent == pytest.approx(paid + 0.0118) and reserved == 0, "the budget still holds its worst case"
    assert possibly_billed_usd(after) == pytest.approx(0.0118)

    assert main(["cost", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"billed: {sum(1 for r in after if r.outcome == 'ok' and not r.cache_hit)} calls, ${paid:.6f}" in out
    assert "possibly billed (killed in flight, or sent and the reply late, cut or dropped): 1 calls, up to " \
        "$0.011800" in out
    assert "cancelled in flight: 0 calls" in out
    assert "in flight at a kill" not in out


def test_a_reply_that_reached_the_cache_is_reconciled_not_unknown(tmp_path: Path) -> None:
    settings = sim_settings(max_rounds=1)
    asyncio.run(start_exam(settings, ExamRequest(list(CORPUS)), tmp_path, quiet=True, report=False))
    paid = known_usd(RunDir(tmp_path).ledger_records())
    killed = killed_in_flight(tmp_path, cached=True)

    async def resume() -> float:
        async with Gateway(settings, tmp_path) as gw:
            gw.resume_spending()
            return gw.budget.spent_usd

    spent = asyncio.run(resume())
    after = RunDir(tmp_path).ledger_records()
    assert [r.call_id for r in after if r.outcome == "reconciled"] == [killed["call_id"]]
    (reconciled,) = [r for r in after if r.outcome == "reconciled"]
    assert reconciled.reply_model == killed["reply_model"] == "sim", "the model the cached reply names"
    assert not any(r.outcome == "unknown" for r in after) and not in_flight(after)
    assert spent == pytest.approx(paid) == known_usd(after)


def test_cost_shows_calls_cancelled_before_a_reply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `cancelled` outcome (what a Ctrl-C handler writes for a call it stopped after it was sent):
    counted on its own line with its worst case, not billed, and held against a budget at that worst case
    (the provider may have billed it)."""
    rows = [
        {"call_id": "a", "role": "judge", "stage": "judge", "outcome": STARTED, "worst_case_usd": 0.01},
        {"call_id": "a", "role": "judge", "stage": "judge", "outcome": "ok", "cache_hit": False, "cost_usd": 0.002,
         "prompt_tokens": 100, "completion_tokens": 20},
        {"call_id": "b", "role": "judge", "stage": "judge", "outcome": STARTED, "worst_case_usd": 0.01},
        {"call_id": "b", "role": "judge", "stage": "judge", "outcome": "cancelled", "worst_case_usd": 0.01,
         "cost_usd": 0.0},
    ]
    (tmp_path / rundir.LEDGER).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["cost", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "billed: 1 calls, $0.002000" in out
    assert "possibly billed (killed in flight, or sent and the reply late, cut or dropped): 0 calls" in out
    assert "cancelled in flight: 1 calls, up to $0.010000" in out
    assert spent_usd(RunDir(tmp_path).ledger_records()) == pytest.approx(0.012)
