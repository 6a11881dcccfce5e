"""SIGTERM and SIGINT stop a run the same orderly way: the calls in flight get `cancelled` outcomes,
run.json says `interrupted`, one line says how to continue, and the exit status is 128 + the signal
(143 / 130). A resume then finishes with the verdicts of a run nobody stopped. And a call that fails for
good leaves the run `incomplete` (exit 5), not `completed`; its resume asks exactly the failed calls again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core import rundir
from examiner.core.ledger_record import LedgerRecord
from examiner.core.rundir import RunDir
from examiner.core.stopping import Interrupted, run_stoppable
from examiner.llm.ledger import CANCELLED, STARTED, in_flight
from examiner.simulator.process import SimulatedProcess
from tests.helpers.simulated_exam import PROFILE, ROLES

CORPUS = [str(p) for p in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:2]]


def _config(tmp_path: Path, url: str, name: str = "config.yaml", attempts: int = 6) -> Path:
    endpoint = EndpointSpec(provider="openai", base_url=url, model="sim", price_input_per_1m=2.5,
                            price_output_per_1m=10.0, max_concurrency=8, max_attempts=attempts)
    settings = Settings(endpoints={"sim": endpoint}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": 3})
    path = tmp_path / name
    path.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
    return path


def _outcomes(run_dir: Path) -> list[tuple[str, str, str]]:
    return sorted((o.unit_id, o.target, o.status) for o in RunDir(run_dir).read().outcome_records.values())


def _stop_when_calls_in_flight(args: list[str], ledger: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """Run `examiner ARGS` and send `signum` once the ledger shows requests sent and not yet answered."""
    process = subprocess.Popen([sys.executable, "-m", "examiner.cli.main", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if ledger.exists() and len(ledger.read_bytes().splitlines()) >= 12:
            rows = [LedgerRecord.model_validate_json(line) for line in ledger.read_text().splitlines()[:-1] if line.strip()]
            if in_flight(rows):
                break
        time.sleep(0.01)
    assert process.poll() is None, "the run ended before it could be stopped"
    process.send_signal(signum)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_signal_settles_every_call_and_the_resume_finishes_as_if_never_stopped(
        tmp_path: Path, signum: int, code: int) -> None:
    with SimulatedProcess(options={"knowledge": PROFILE, "latency_s": 0.3}) as url:
        config = _config(tmp_path, url)
        reference = tmp_path / "reference"
        assert main(["run", *CORPUS, "--config", str(config), "--out", str(reference), "--quiet"]) == 0

        run_dir = tmp_path / "stopped"
        stopped = _stop_when_calls_in_flight(
            ["run", *CORPUS, "--config", str(config), "--out", str(run_dir), "--quiet"], run_dir / rundir.LEDGER,
            signum)
        assert stopped.returncode == code, stopped.stderr[-2000:]
        lines = [line for line in stopped.stderr.splitlines() if line.startswith("examiner:")]
        name = signal.Signals(signum).name
        assert lines == [f"examiner: interrupted by {name}; the run is saved as interrupted: continue it with "
                         f"examiner resume {run_dir}"], stopped.stderr[-2000:]
        assert "Traceback" not in stopped.stderr
        run = RunDir(run_dir)
        assert run.read_info().status == "interrupted"
        records = run.ledger_records()
        assert not in_flight(records), "every call sent before the signal has an outcome"
        cancelled = [r for r in records if r.outcome == CANCELLED]
        assert cancelled and all(r.cost_usd == 0.0 and r.worst_case_usd > 0 for r in cancelled)
        assert sum(r.outcome == STARTED for r in records) >= len(cancelled)

        assert main(["resume", str(run_dir), "--quiet"]) == 0
        assert run.read_info().status == "completed"
        assert _outcomes(run_dir) == _outcomes(reference)
        assert not in_flight(run.ledger_records())


def test_run_stoppable_turns_a_signal_into_interrupted_after_the_work_unwound() -> None:
    unwound: list[str] = []

    async def work() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            unwound.append("cancelled")
            raise

    with pytest.raises(Interrupted) as stop:
        run_stoppable(work())
    assert unwound == ["cancelled"] and stop.value.exit_code == 143 and str(stop.value) == "SIGTERM"


def test_run_stoppable_returns_the_value_and_leaves_no_handler_behind() -> None:
    async def work() -> int:
        return 7

    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or what an earlier test in this process left (Ray's)
    assert run_stoppable(work()) == 7
    assert signal.getsignal(signal.SIGTERM) == before


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_a_call_failing_for_good_leaves_the_run_incomplete_and_its_resume_completes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The endpoint answers a share of requests with HTTP 500 and the endpoint makes one attempt: some
    calls fail for good. The run stops `incomplete` with exit 5 and the command that continues it. With the
    endpoint healthy again (same address), the resume asks the failed calls again (every reply it had
    comes from the cache, none is paid twice) and ends with the outcomes of a run without the outage."""
    with SimulatedProcess(options={"knowledge": PROFILE}) as url:
        reference = tmp_path / "reference"
        assert main(["run", *CORPUS, "--config", str(_config(tmp_path, url, "ref.yaml")), "--out", str(reference),
                     "--quiet"]) == 0
    port = _free_port()
    run_dir = tmp_path / "run"
    with SimulatedProcess(options={"knowledge": PROFILE, "faults": {"server_error": 0.15}}, port=port) as down:
        config = _config(tmp_path, down, attempts=1)
        code = main(["run", *CORPUS, "--config", str(config), "--out", str(run_dir), "--quiet"])
    err = capsys.readouterr().err
    assert code == 5, err
    run = RunDir(run_dir)
    info = run.read_info()
    assert info.status == "incomplete" and "failed for good" in info.stop_reason
    assert f"examiner resume {run_dir}" in err
    failed = [r for r in run.ledger_records() if r.outcome == "failed"]
    assert failed
    notice = "INCOMPLETE: model calls failed for good"
    assert notice in (run_dir / "report.md").read_text() and notice in (run_dir / "report.html").read_text()
    with SimulatedProcess(options={"knowledge": PROFILE}, port=port) as up:
        assert up == down
        assert main(["resume", str(run_dir), "--quiet"]) == 0
    assert run.read_info().status == "completed"
    assert _outcomes(run_dir) == _outcomes(reference)
    assert notice not in (run_dir / "report.md").read_text()
    # Every request of the uninterrupted run paid once over both processes: the resume asked the failed
    # calls again and made the rest of the run's calls, and paid for no reply it already had.
    paid = lambda rows: [r for r in rows if r.outcome == "ok" and not r.cache_hit]  # noqa: E731
    assert len(paid(run.ledger_records())) == len(paid(RunDir(reference).ledger_records()))
