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
    """Start `python -m examiner.cli ARGS` and SIGKILL it as soon as `ready()` holds. Fails with `too_late`
    when the process ends first (or `timeout_s` passes), because a test that never killed proves nothing."""
    process = subprocess.Popen([sys.executable, "-m", "examiner.cli", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None and not ready():
        time.sleep(0.005)
    assert process.poll() is None, too_late
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
