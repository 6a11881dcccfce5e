"""Calls killed in flight stay held against the budget after a resume settles them `unknown`: the provider
may have billed them, so a capped run killed and resumed passes its cap by at most one call's worst case."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.exam.runner import resume_exam
from examiner.llm import Gateway
from examiner.llm.ledger import (UNKNOWN, accounted_usd, in_flight, known_usd, possibly_billed_usd, spent_usd,
                                 unknown_usd)
from tests.helpers.killing import kill_examiner_when
from tests.helpers.paid_runs import CORPUS
from tests.helpers.simulated_exam import sim_settings

CAP = 0.04
"""About two thirds of what the whole simulated exam of CORPUS costs."""


def test_unknown_calls_stay_held_so_a_killed_run_keeps_its_cap(tmp_path: Path) -> None:
    settings = sim_settings(latency=0.03).merged({"budget_usd": CAP})
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
    run_dir = tmp_path / "killed"
    ledger = run_dir / rundir.LEDGER

    def paid_and_in_flight() -> bool:
        if not ledger.exists():
            return False
        records = RunDir(run_dir).ledger_records()
        return spent_usd(records) >= CAP / 3 and len(in_flight(records)) >= 2

    kill_examiner_when(["run", *CORPUS, "--config", str(config), "--out", str(run_dir), "--quiet"],
                       paid_and_in_flight)
    killed = RunDir(run_dir).ledger_records()
    held_at_kill = in_flight(killed)
    assert len(held_at_kill) >= 2

    async def settle() -> float:
        async with Gateway(settings, run_dir) as gw:
            gw.resume_spending()
            return gw.budget.spent_usd

    resumed_from = asyncio.run(settle())
    settled = RunDir(run_dir).ledger_records()
    unknown = [r for r in settled if r.outcome == UNKNOWN]
    assert not in_flight(settled) and len(unknown) == len(held_at_kill), "every call in flight settled `unknown`"
    worst = sum(r.worst_case_usd for r in held_at_kill)
    assert unknown_usd(settled) == worst > 0
    assert resumed_from == spent_usd(settled) == known_usd(settled) + possibly_billed_usd(settled)
    assert resumed_from >= known_usd(killed) + worst, "the resumed budget starts from known + unknown worst cases"

    info = asyncio.run(resume_exam(run_dir, quiet=True, report=False))
    assert info.status in ("budget_exhausted", "completed"), info.stop_reason
    final = RunDir(run_dir).ledger_records()
    one_call = max(r.worst_case_usd for r in final)
    assert unknown_usd(final) == worst, "the unknown calls are still counted"
    assert accounted_usd(final) <= CAP + one_call
    assert spent_usd(final) == accounted_usd(final)
