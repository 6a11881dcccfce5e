"""kill -9 of an `examiner` subprocess at a chosen moment: what every kill/resume test needs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence


def kill_examiner_when(args: Sequence[str], ready: Callable[[], bool], *, timeout_s: float = 120.0,
                       too_late: str = "the run finished before it could be killed") -> None:
    """Start `python -m examiner.cli.main ARGS` and SIGKILL it as soon as `ready()` holds. Fails with `too_late`
    when the process ends first (or `timeout_s` passes), because a test that never killed proves nothing."""
    process = subprocess.Popen([sys.executable, "-m", "examiner.cli.main", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None and not ready():
        time.sleep(0.005)
    assert process.poll() is None, too_late
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


_RUN = "import sys; from examiner.cli.main import main; sys.exit(main(sys.argv[1:]))"
_KILL_AFTER_APPENDS = """
import os, signal, sys
from examiner.exam.run_writer import RunStore
append = RunStore.append_lines
def killing_append(self, model, lines):
    new = any(key not in self.index(model) for key in lines)
    append(self, model, lines)
    if new:
        os.kill(os.getpid(), signal.SIGKILL)
RunStore.append_lines = killing_append
from examiner.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
"""`examiner ARGS` whose run store SIGKILLs its own process right after the first append that wrote a record
id its file did not hold (a node boundary the run had not reached before). RunStore.append_lines is where
every record reaches its file (`append` and the release of held records both go through it)."""


def run_examiner_killed_at_new_records(args: Sequence[str], *, kill: bool = True, timeout_s: float = 300.0) -> bool:
    """Run `examiner ARGS` and (with `kill`) SIGKILL it right after the first append of records the run
    did not hold yet: a node's new records are on disk, its checkpoint is not, so a resume runs the node
    again (a kill at a node boundary; every kill-resume pair reaches one boundary further). Appends a
    resume repeats (records already on disk) do not kill. True when the process was killed, False when
    it ended first (with exit status 0; anything else fails)."""
    process = subprocess.run([sys.executable, "-c", _KILL_AFTER_APPENDS if kill else _RUN, *args],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout_s,
                             env=dict(os.environ, HF_HUB_OFFLINE="1"))
    if process.returncode == -signal.SIGKILL:
        return True
    assert process.returncode == 0, process.stderr.decode(errors="replace")[-2000:]
    return False


def kill_until_finished(first: Sequence[str], run_dir: str | os.PathLike[str], *, most: int = 30) -> int:
    """Run `examiner FIRST`, killed at its first new records, then `examiner resume RUN_DIR`, killed the same
    way, again and again until a resume finishes; how many kills it took (fails past `most`: no progress)."""
    kills = 0
    while run_examiner_killed_at_new_records(list(first) if kills == 0 else ["resume", str(run_dir), "--quiet"]):
        kills += 1
        assert kills < most, "the resumes make no progress"
    return kills
