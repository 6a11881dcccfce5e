"""How wide examiner's terminal output is: the terminal's width on a terminal, no 80-column wrap when piped.

Why: rich gives a console that is not a terminal 80 columns, so output piped to a file or `tee` had its
tables folded mid-word ("candid/ate") and its long progress lines broken in two (issue 29). Piped output
is read by people scrolling a log and by tools (grep, awk) that want one record per line, so it is not
wrapped at 80: tables get PIPED_WIDTH columns and prose is not wrapped at all. `COLUMNS`, where set,
is the width either way (what `COLUMNS=100 examiner run ... | less` asks for).
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from typing import IO, Any

PIPED_WIDTH = 240
"""Columns of a console whose stream is not a terminal (and `COLUMNS` unset): wide enough that no table of
examiner's folds a word; a longer text cell still wraps, at spaces."""


def _columns() -> int | None:
    """`COLUMNS` when it holds a positive number."""
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def _is_terminal(stream: IO[str] | Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def output_width(stream: IO[str] | Any = None) -> int:
    """Columns to lay tables out in on `stream` (stdout by default): `COLUMNS`, else the terminal's width,
    else PIPED_WIDTH."""
    stream = sys.stdout if stream is None else stream
    columns = _columns()
    if columns:
        return columns
    if _is_terminal(stream):
        return shutil.get_terminal_size().columns
    return PIPED_WIDTH


def prose_width(stream: IO[str] | Any = None) -> int | None:
    """Columns to wrap sentences at on `stream`: `COLUMNS` or the terminal's width (at most 100, for
    reading); None when piped (a sentence stays one line)."""
    stream = sys.stdout if stream is None else stream
    columns = _columns()
    if columns:
        return min(columns, 100)
    if _is_terminal(stream):
        return min(shutil.get_terminal_size().columns, 100)
    return None


@functools.cache
def _literal_console() -> Any:
    """The rich Console class of `make_console` (made on first use: rich loads in tenths of a second)."""
    from rich.console import Console

    from examiner.core.plain_text import visible_controls

    class LiteralConsole(Console):
        """Prints each string as it is written: a target's name, a question or a document's name in a
        table cell or a line reads `[bold red]` as text, not as rich markup, and its control characters
        as visible escapes (`\\x1b`), never as a terminal sequence. Styles come from Text objects."""

        def render_str(self, text: str, **options: Any) -> Any:
            return super().render_str(visible_controls(text), **options)

    return LiteralConsole


def make_console(*, stderr: bool = False) -> Any:
    """A rich Console on stdout (or stderr) of `output_width` columns that shows text from others as it is:
    no markup or emoji code read in a string, control characters escaped (examiner.core.plain_text)."""
    return _literal_console()(stderr=stderr, width=output_width(sys.stderr if stderr else sys.stdout),
                              markup=False, emoji=False)


__all__ = ["PIPED_WIDTH", "make_console", "output_width", "prose_width"]
