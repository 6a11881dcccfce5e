"""Output folders written whole or not at all.

Why: a dataset export writes several files into a new folder; a kill halfway left a partial folder at the
output path, which the retry then refused as "not an empty folder". Writing into a hidden folder beside it
and renaming that to the output path at the end means the output path holds a finished export or
nothing. A staging folder a killed process left behind is removed by the next export to the same path
(only one named for a process that no longer runs).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _prefix(out: Path) -> str:
    return f".{out.name}.partial-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def clear_stale(out: Path) -> list[Path]:
    """Remove the staging folders of `out` that killed processes left (their pid runs no more); returns them."""
    pattern = re.compile(re.escape(_prefix(out)) + r"(\d+)-[A-Za-z0-9_]+")
    removed: list[Path] = []
    parent = out.parent
    if not parent.is_dir():
        return removed
    for entry in parent.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() and not _alive(int(match.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


@contextlib.contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """A new hidden folder beside `out` to write into, renamed to `out` (absent or an empty folder) when
    the block ends; removed when it raises (a stop signal included)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    clear_stale(out)
    staging = Path(tempfile.mkdtemp(prefix=f"{_prefix(out)}{os.getpid()}-", dir=out.parent))
    try:
        yield staging
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it 0700; the export is an ordinary folder
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["clear_stale", "staged_folder"]
