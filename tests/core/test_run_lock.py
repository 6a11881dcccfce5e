"""One writer per run directory: a second `run` or `resume` is refused with one line and exit 2 and
writes nothing; the lock dies with its process, so kill -9 leaves no stale lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core import rundir
from examiner.core.runlock import RunDirInUse, hold_run_dir
from tests.helpers.paid_runs import CORPUS, paid_bodies, start_killed_run
from tests.helpers.simulated_exam import outcomes_of, sim_settings

HOLD = "import sys, time; from examiner.core.runlock import hold_run_dir\nwith hold_run_dir(sys.argv[1]):\n" \
       "    print('held', flush=True); time.sleep(600)"
"""A process that takes a run directory's lock and keeps it until it is killed."""


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_held_run_directory_is_refused_and_left_untouched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """While a process holds the lock, `resume` and `run --out` print one line naming it, exit 2 and
    write nothing; after that process is killed with SIGKILL the directory is free."""
    run_dir = tmp_path / "run"
    assert main(["run", *CORPUS, "--simulate", "--max-rounds", "1", "--out", str(run_dir), "--quiet"]) == 0
    capsys.readouterr()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = snapshot(run_dir)
        for argv in (["resume", str(run_dir), "--quiet"],
                     ["run", *CORPUS, "--simulate", "--out", str(run_dir), "--quiet"]):
            assert main(argv) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith(f"examiner: error: {run_dir} is in use by process {holder.pid} (started ")
            assert snapshot(run_dir) == before
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    with hold_run_dir(run_dir):
        with pytest.raises(RunDirInUse):
            with hold_run_dir(run_dir):
                pass  # a second holder, even in the same process, is refused
    assert main(["resume", str(run_dir), "--quiet"]) == 0


def test_two_concurrent_resumes_equal_one(tmp_path: Path) -> None:
    """Two `examiner resume` of one killed run at once: the second is refused with exit 2, and the run
    ends with the records and ledger a single resume of the same killed run gives."""
    killed = start_killed_run(sim_settings(latency=0.03), tmp_path, kill_at_usd=0.02)
    alone = tmp_path / "alone"
    subprocess.run(["cp", "-a", str(killed), str(alone)], check=True)
    assert main(["resume", str(alone), "--quiet"]) == 0

    env = dict(os.environ, HF_HUB_OFFLINE="1")
    command = [sys.executable, "-m", "examiner.cli.main", "resume", str(killed), "--quiet"]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    lock = killed / rundir.LOCK
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and f'"pid": {first.pid}' not in lock.read_text():
        time.sleep(0.01)
    second = subprocess.run(command, capture_output=True, text=True, env=env)
    _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err
    assert second.returncode == 2
    refusal = second.stderr.strip().splitlines()
    assert len(refusal) == 1 and f"{killed} is in use by process {first.pid} (started " in refusal[0]

    assert sorted(paid_bodies(killed)) == sorted(paid_bodies(alone))
    assert outcomes_of(killed) == outcomes_of(alone)
    for name in (rundir.VERDICTS, rundir.OUTCOMES, rundir.LEDGER):
        assert len((killed / name).read_text().splitlines()) == len((alone / name).read_text().splitlines()), name
