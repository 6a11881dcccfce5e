"""One writer per run directory: an exclusive fcntl.flock on the run's lock file (rundir.LOCK).

Two processes appending to one run would pay every call twice and write every record twice, so `run`
and `resume` hold this lock for as long as they write. The kernel drops a flock when its process dies,
so a run killed with kill -9 leaves no stale lock behind; the pid and start time written into the file
only serve the message a refused process prints.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from examiner.core.rundir import LOCK
from examiner.core.errors import UserError
from examiner.core.owned import refuse_links


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class RunDirInUse(UserError):
    """Another live process holds the run directory's lock."""


def _holder(fd: int) -> str:
    """`process PID (started TIME)` from the lock file, as its holder wrote it."""
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096)
    try:
        owner = json.loads(raw)
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(owner["started"])))
        return f"process {int(owner['pid'])} (started {started})"
    except (ValueError, KeyError, TypeError):  # the holder took the lock but has not written yet
        return "another process"


def _take(fd: int, run_dir: str | Path) -> None:
    """Take the lock on an open lock file, or raise RunDirInUse naming its holder."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunDirInUse(f"{run_dir} is in use by {_holder(fd)}") from None


@contextmanager
def hold_run_dir(run_dir: str | Path) -> Iterator[None]:
    """Hold the run directory's lock for the duration of the block; RunDirInUse if another process has
    it. A refused process writes nothing: the lock file is opened without truncation and only the
    holder rewrites it. A run folder holding a symbolic link is refused first (examiner.core.owned): every
    writer of a run holds this lock, so none writes through a link, the lock file's included."""
    refuse_links(Path(run_dir))
    path = Path(run_dir) / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644)
    try:
        _take(fd, run_dir)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "started": time.time()}).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the flock


def refuse_if_in_use(run_dir: str | Path) -> None:
    """RunDirInUse if a live process holds the run directory's lock; writes nothing either way."""
    try:
        fd = os.open(Path(run_dir) / LOCK, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return
    try:
        _take(fd, run_dir)
    finally:
        os.close(fd)


__all__ = ["RunDirInUse", "hold_run_dir", "refuse_if_in_use"]
