"""Errors a user can act on: the CLI prints them as one line and exits with code 2.

The exit codes every command shares live here too, so that a job system can tell a retryable outage
(EXIT_OUTAGE) from input it should not retry (EXIT_USER_ERROR) and from a bug (EXIT_INTERNAL_ERROR).

Also the little the CLI's last-resort handler needs to know about the command that failed: the run
folder it was writing (`note_run_dir`), where the full traceback of an unexpected error is kept.
"""

from __future__ import annotations

import errno
from pathlib import Path

EXIT_USER_ERROR = 2
"""Bad input, a refused file or folder, a full disk: one line on stderr."""
EXIT_OUTAGE = 75
"""A run stopped `failed` because every model call of a stage failed (endpoint down, unreachable, timing
out): nothing is wrong with the input, so trying again later (`examiner resume`) may succeed (EX_TEMPFAIL)."""
EXIT_INTERNAL_ERROR = 70
"""An unexpected error (a bug): one line on stderr, the traceback in the run folder's log (EX_SOFTWARE)."""


class UserError(Exception):
    """A problem with the user's input or configuration (bad file, unknown role, missing key...)."""


class ConfigError(UserError):
    """The configuration file, environment or flags do not describe a usable setup."""


class CallError(UserError, TypeError):
    """A library function called with arguments it does not take (an unknown keyword, a missing option):
    one line saying what it takes; a TypeError too, so callers catching that still do."""


class BudgetExhausted(Exception):
    """The next model call could push spending above the run's budget; the run stops cleanly."""


_RUN_DIRS: list[Path] = []


def note_run_dir(path: str | Path) -> None:
    """Record the run folder the command is writing (the last one noted is the one an error names)."""
    _RUN_DIRS.append(Path(path))


def current_run_dir() -> Path | None:
    """The run folder last noted by this process, if any."""
    return _RUN_DIRS[-1] if _RUN_DIRS else None


def forget_run_dirs() -> None:
    """Clear the record (each CLI command starts with none)."""
    _RUN_DIRS.clear()


def causes(exc: BaseException) -> list[BaseException]:
    """`exc`, the exceptions it was raised from or during, and those inside exception groups, each once."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop(0)
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo += [item.__cause__, item.__context__, *getattr(item, "exceptions", ())]
    return seen


def disk_full(exc: BaseException) -> BaseException | None:
    """The exception in `exc`'s chain that says the disk is full (ENOSPC, EDQUOT, SQLite's 'database or
    disk is full'), or None."""
    for item in causes(exc):
        if isinstance(item, OSError) and item.errno in (errno.ENOSPC, errno.EDQUOT):
            return item
        if type(item).__name__ in ("OperationalError", "DatabaseError") and "disk is full" in str(item):
            return item
    return None


__all__ = ["BudgetExhausted", "CallError", "ConfigError", "EXIT_INTERNAL_ERROR", "EXIT_OUTAGE", "EXIT_USER_ERROR", "UserError", "causes",
           "current_run_dir", "disk_full", "forget_run_dirs", "note_run_dir"]
