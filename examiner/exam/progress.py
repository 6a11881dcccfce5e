"""Live progress per stage: round, units left, calls, tokens and dollars so far, elapsed time and an
estimate of the time left (rich).

On a terminal each stage is a live bar. Piped (stderr not a terminal: a log file, `2>&1 | tee`), a bar
cannot redraw, so progress comes as whole lines instead, never a carriage return: a line when a stage
passes a quarter of its items (at most one per PIPED_EVERY_S seconds, `EXAMINER_PROGRESS_EVERY_S`
overrides it) and one when it ends, each with the items done, the time elapsed and the time left at the
rate so far; lines are not wrapped (examiner.core.console).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from examiner.core.console import make_console
from examiner.core.plain_text import visible_controls
from examiner.llm.gateway import Totals

PIPED_EVERY_S = 10.0
"""Least seconds between two progress lines of one stage when piped (the stage's last line always shows)."""

T = TypeVar("T")


class ExamProgress:
    """One progress bar per stage of a round; the line ends with the gateway's running totals."""

    def __init__(self, totals: Totals, *, enabled: bool = True, console: Console | None = None) -> None:
        self.totals = totals
        self.console = console or make_console(stderr=True)
        self.enabled = enabled
        self.piped = not self.console.is_terminal
        """Whole progress lines instead of bars (see the module docstring)."""
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),  # it names targets: shown as written
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[money]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            disable=not enabled or self.piped,
            transient=self.piped,
        )

    def _money(self) -> str:
        t = self.totals
        return (
            f"calls {t.calls} (+{t.cache_hits} cached) · tokens {t.prompt_tokens + t.completion_tokens:,} · "
            f"${t.cost_usd:.4f}"
        )

    @contextmanager
    def stage(self, round: int, name: str, total: int, pool: int) -> Iterator["StageTicker"]:
        """A bar for `total` work items of one stage of an exam round."""
        with self.task(f"round {round} · {name:<18} · pool {pool:>5}", total) as ticker:
            yield ticker

    @contextmanager
    def task(self, description: str, total: int) -> Iterator["StageTicker"]:
        """A bar for `total` work items (an exam stage, or every row of `examiner judge`)."""
        with self._progress:
            task = self._progress.add_task(visible_controls(description), total=total, money=self._money())
            ticker = StageTicker(self, task, description, total)
            yield ticker
            self._progress.update(task, completed=total, money=self._money())
        if self.enabled and self.piped:
            self.line(f"{description} · {total} done in {_duration(ticker.elapsed())} · {self._money()}")

    def line(self, text: str) -> None:
        """One whole progress line (piped output): printed as is, never wrapped or marked up."""
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def note(self, message: str) -> None:
        """A line of its own above the bars (not shown when quiet)."""
        if self.enabled:
            self.console.print(message)


def _duration(seconds: float) -> str:
    """`42s`, `3m05s`, `1h02m`."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def eta_text(done: int, total: int, elapsed: float) -> str:
    """`12s elapsed, ETA 30s` (the time left at the rate so far); `ETA unknown` before the first item."""
    left = "unknown" if done <= 0 else _duration(elapsed / done * max(0, total - done))
    return f"{_duration(elapsed)} elapsed, ETA {left}"


def _every() -> float:
    value = os.environ.get("EXAMINER_PROGRESS_EVERY_S", "")
    try:
        return max(0.0, float(value)) if value else PIPED_EVERY_S
    except ValueError:
        return PIPED_EVERY_S


class StageTicker:
    """Advances one stage's bar (piped: writes its progress lines)."""

    def __init__(self, owner: ExamProgress, task: TaskID, description: str = "", total: int = 0) -> None:
        self._owner = owner
        self._task = task
        self._description = description
        self._total = total
        self._done = 0
        self._started = time.monotonic()
        self._last_line = self._started
        self._quarter = 0

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def advance(self, amount: int = 1) -> None:
        self._owner._progress.update(self._task, advance=amount, money=self._owner._money())
        self._done += amount
        if self._owner.enabled and self._owner.piped and self._total:
            self._piped_line()

    def _piped_line(self) -> None:
        """A line when the stage passes another quarter of its items, unless one was written too recently
        (the stage's last line is written by the stage itself)."""
        quarter = min(3, 4 * self._done // self._total)
        now = time.monotonic()
        if quarter <= self._quarter or self._done >= self._total or now - self._last_line < _every():
            return
        self._quarter, self._last_line = quarter, now
        self._owner.line(f"{self._description} · {self._done}/{self._total} · "
                         f"{eta_text(self._done, self._total, now - self._started)} · {self._owner._money()}")

    def each(self, items: Iterable[T]) -> Iterator[T]:
        """`items` unchanged, advancing the bar by one as each is taken (for work that consumes a stream)."""
        for item in items:
            yield item
            self.advance()
