"""The budget belongs to the run: it holds across kill -9 and resume, and a budget-stopped run can be
continued with a larger cap to the same outcomes as an uninterrupted run, paying no request twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core import rundir
from examiner.exam.runner import ExamRequest, resume_exam, start_exam
from tests.helpers.paid_runs import CORPUS, paid_bodies, spent, start_killed_run
from tests.helpers.simulated_exam import outcomes_of, sim_settings


async def test_cap_holds_across_kill_and_resume(tmp_path: Path) -> None:
    """Killed at about a third of its cap and resumed: the resumed process counts what was spent, so
    the run as a whole stays under the cap (calls in flight at the kill died unanswered with the
    in-process simulated server, so nothing unrecorded was paid)."""
    cap = 0.07
    killed = start_killed_run(sim_settings(latency=0.03).merged({"budget_usd": cap}), tmp_path, kill_at_usd=0.025)
    before = spent(killed)
    assert 0.025 <= before < cap

    info = await resume_exam(killed, quiet=True, report=False)
    assert info.status == "budget_exhausted", info.stop_reason
    assert before < spent(killed) <= cap


def test_budget_stopped_run_continues_with_a_larger_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A budget stop names what was spent and left undone and the command that continues it; that
    command finishes the exam with the outcomes of an uninterrupted run, and no request is paid twice."""
    reference = tmp_path / "reference"
    asyncio.run(start_exam(sim_settings(), ExamRequest(list(CORPUS), run_id="fixed"), reference, quiet=True, report=False))

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(sim_settings().model_dump(mode="json")), encoding="utf-8")
    run_dir = tmp_path / "stopped"
    code = main(["run", *CORPUS, "--config", str(config), "--budget-usd", "0.02", "--out", str(run_dir), "--quiet"])
    assert code == 3
    err = capsys.readouterr().err
    assert "of the $0.0200 cap" in err and "units not yet covered" in err and "in round 1" in err
    continuation = f"examiner resume {run_dir} --budget-usd 0.04"
    assert continuation in err
    assert yaml.safe_load((run_dir / rundir.CONFIG).read_text())["budget_usd"] == 0.02
    stopped_at = spent(run_dir)
    assert 0 < stopped_at <= 0.02

    assert main(["resume", str(run_dir), "--quiet"]) == 3, "the same cap stops the run again"
    assert spent(run_dir) <= 0.02

    assert main(continuation.split()[1:] + ["--quiet"]) == 3, "$0.04 is still short of the whole exam"
    assert spent(run_dir) <= 0.04
    assert main(["resume", str(run_dir), "--budget-usd", "1", "--quiet"]) == 0
    assert yaml.safe_load((run_dir / rundir.CONFIG).read_text())["budget_usd"] == 1.0

    expected = {k: (o.status, o.verdict_id is not None) for k, o in outcomes_of(reference).items()}
    assert {k: (o.status, o.verdict_id is not None) for k, o in outcomes_of(run_dir).items()} == expected
    paid = paid_bodies(run_dir)
    assert len(paid) == len(set(paid)), "a request was paid twice"
    assert sorted(paid) == sorted(paid_bodies(reference))
    assert spent(run_dir) == pytest.approx(spent(reference))


def test_environment_variable_raises_the_cap_on_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EXAMINER_BUDGET_USD is the cap of a resume as it is of a run (and is recorded for the next); the
    rest of a resume's settings come from the run, whatever else the environment says."""
    run_dir = tmp_path / "run"
    info = asyncio.run(start_exam(sim_settings().merged({"budget_usd": 0.02}), ExamRequest(list(CORPUS)), run_dir,
                                  quiet=True, report=False))
    assert info.status == "budget_exhausted"
    monkeypatch.setenv("EXAMINER_BUDGET_USD", "1")
    monkeypatch.setenv("EXAMINER_ROLE_JUDGE", "an-endpoint-this-run-does-not-know")
    assert main(["resume", str(run_dir), "--quiet"]) == 0
    assert yaml.safe_load((run_dir / rundir.CONFIG).read_text())["budget_usd"] == 1.0


def test_stop_during_unit_extraction_continues_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A budget stop before the graph's first checkpoint (LLM unit extraction) is a budget stop like any
    other: exit 3 with the message, and a resume with a larger cap runs the exam to the end."""
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(sim_settings(max_rounds=1, unit_mode="llm").model_dump(mode="json")), encoding="utf-8")
    run_dir = tmp_path / "run"
    assert main(["run", *CORPUS, "--config", str(config), "--budget-usd", "0.0001", "--out", str(run_dir), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "budget exhausted during unit extraction in round 1" in err and "no knowledge units were made yet" in err
    assert main(["resume", str(run_dir), "--budget-usd", "1", "--quiet"]) == 0
    assert outcomes_of(run_dir)
