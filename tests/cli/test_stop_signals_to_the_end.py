"""Stop signals are handled until the process ends: a second and a third SIGTERM (one while the first
unwinds, one after the event loop closed) still end `examiner run` with exit 143 and run.json
`interrupted`, never the default action that kills the process; a SIGTERM while the reports are written
is honoured there (exit 143, saying the run is complete and how to write them), not ignored until they
are done; and a kill -9 while report.md is written leaves no empty report.md beside run.json `completed`.

Each child process signals itself at a chosen point (patched in before the CLI starts), so the moment
is the same on every machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from examiner.core import rundir
from tests.helpers.simulated_exam import PROFILE

CORPUS = [str(p) for p in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:2]]

_START = """
import os, signal, sys, time
import examiner.cli.main as cli
def term():
    os.kill(os.getpid(), signal.SIGTERM)
"""
_RUN = """
sys.argv = ["examiner", *sys.argv[1:]]
sys.exit(cli.main())
"""

THREE_SIGNALS = _START + """
from examiner.exam.run_writer import RunStore
from examiner.core.rundir import RunDir
append, write_info, line = RunStore.append, RunDir.write_info, cli.interrupted_line
def append_then_stop(self, records):
    append(self, records)
    if not getattr(cli, "_sent", False):
        cli._sent = True
        term()                      # the first SIGTERM, once the run has written records
def write_info_signalled(self, info):
    if info.status == "interrupted":
        term()                      # a second one while the first unwinds
    write_info(self, info)
def line_after_the_loop(stop):
    term()                          # a third once the event loop has closed
    time.sleep(0.2)
    return line(stop)
RunStore.append, RunDir.write_info, cli.interrupted_line = append_then_stop, write_info_signalled, line_after_the_loop
""" + _RUN

TERM_IN_REPORTS = _START + """
import examiner.reporting as reporting
build = reporting.build_report
def slow_build(*args, **kwargs):
    term()
    for _ in range(600):            # synchronous work the event loop cannot interrupt
        time.sleep(0.05)
    return build(*args, **kwargs)
reporting.build_report = slow_build
""" + _RUN

KILL_IN_REPORT_MD = _START + """
import examiner.core.owned as owned
replace = owned.os.replace
def killed_before_rename(source, target):
    if str(target).endswith("report.md"):
        os.kill(os.getpid(), signal.SIGKILL)
    return replace(source, target)
owned.os.replace = killed_before_rename
""" + _RUN


def _config(folder: Path) -> Path:
    endpoint = {"provider": "simulated", "model": "sim", "options": {"knowledge": PROFILE}}
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"sim": endpoint},
                                      "roles": {r: "sim" for r in ("examiner", "candidate", "judge")},
                                      "exam": {"max_rounds": 1}}), encoding="utf-8")
    return config


def _examiner(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, HF_HUB_OFFLINE="1"))


def _status(run_dir: Path) -> str:
    return str(json.loads((run_dir / rundir.RUN_INFO).read_text(encoding="utf-8"))["status"])


def _examiner_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("examiner:")]


def test_later_sigterms_do_not_cut_the_first_ones_unwinding_short(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = _examiner(THREE_SIGNALS, "run", *CORPUS, "--config", str(_config(tmp_path)), "--out", str(run_dir),
                     "--quiet")
    assert done.returncode == 143, (done.returncode, done.stderr[-2000:])
    assert _status(run_dir) == "interrupted"
    assert _examiner_lines(done) == [f"examiner: interrupted by SIGTERM; the run is saved as interrupted: continue "
                                     f"it with examiner resume {run_dir}"], done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_sigterm_while_the_reports_are_written_ends_the_command_there(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = _examiner(TERM_IN_REPORTS, "run", *CORPUS, "--config", str(_config(tmp_path)), "--out", str(run_dir),
                     "--quiet")
    assert done.returncode == 143, (done.returncode, done.stderr[-2000:])
    assert _examiner_lines(done) == [f"examiner: interrupted by SIGTERM while writing the reports of a completed "
                                     f"run: write them with examiner report {run_dir}"], done.stderr[-2000:]
    assert _status(run_dir) == "completed" and not (run_dir / rundir.REPORT_MD).exists()
    again = _examiner(_START + _RUN, "report", str(run_dir))
    assert again.returncode == 0, again.stderr[-2000:]
    assert (run_dir / rundir.REPORT_MD).read_text(encoding="utf-8").strip()


def test_kill_9_while_report_md_is_written_leaves_no_empty_report(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = _examiner(KILL_IN_REPORT_MD, "run", *CORPUS, "--config", str(_config(tmp_path)), "--out", str(run_dir),
                     "--quiet")
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr[-2000:])
    assert _status(run_dir) == "completed"
    report = run_dir / rundir.REPORT_MD
    assert not report.exists() or report.read_text(encoding="utf-8").strip()
    again = _examiner(_START + _RUN, "resume", str(run_dir), "--quiet")
    assert again.returncode == 0, again.stderr[-2000:]
    assert report.read_text(encoding="utf-8").strip()
