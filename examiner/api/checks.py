"""Checks made before any work (and any spending) starts, shared by the API and the command line.

Light on purpose: the command line's flag helpers import this module while `examiner --help` builds its
parsers, so it loads nothing beyond the standard library and examiner.core.errors.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

from examiner.core.errors import ConfigError, UserError

Notes = Callable[[str], None]
"""Where a job sends the lines it has for the person running it (skipped rows, warnings, progress)."""


def to_stderr(line: str) -> None:
    """The default `notes`: each line on stderr, as the command prints it."""
    print(line, file=sys.stderr)


def output_dir(path: str | Path, flag: str = "--out") -> Path:
    """`path` as an output folder, checked before any work (and any spending) starts; nothing is created.

    The nearest existing folder on the way must be a folder we may write into: a path below a regular
    file, or in a read-only place, is one line naming the option (by its flag) and the part at fault."""
    folder = Path(path)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"{flag} {folder}: cannot make a folder there, {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {folder}: cannot write into {existing} (permission denied or read-only)")
    return folder


def check_budget(budget: float | None, name: str = "--budget-usd") -> float | None:
    """A spending cap as given, refused in one line unless a finite number of dollars, zero or more."""
    if budget is not None and (not math.isfinite(budget) or budget < 0):
        raise ConfigError(f"{name} must be a finite number of dollars, zero or more, got {budget}")
    return budget


def cache_folder(folder: str | Path | None) -> str | None:
    """A shared response cache folder (--cache DIR) as an absolute path, so `resume` finds it from any
    directory, checked as an output folder first; None stays None."""
    if folder is None:
        return None
    return str(output_dir(Path(folder).expanduser(), "--cache").resolve())
