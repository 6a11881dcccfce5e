"""Live progress per stage: round, units left, calls, tokens and dollars so far (rich)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from examiner.llm.gateway import Totals

T = TypeVar("T")


class ExamProgress:
    """One progress bar per stage of a round; the line ends with the gateway's running totals."""

    def __init__(self, totals: Totals, *, enabled: bool = True, console: Console | None = None) -> None:
        self.totals = totals
        self.console = console or Console(stderr=True)
        self.enabled = enabled
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[money]}"),
            TimeElapsedColumn(),
            console=self.console,
            disable=not enabled,
            transient=not sys.stderr.isatty(),
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
            task = self._progress.add_task(description, total=total, money=self._money())
            ticker = StageTicker(self, task)
            yield ticker
            self._progress.update(task, completed=total, money=self._money())
        if self.enabled and not sys.stderr.isatty():
            self.console.print(f"{description} · {total} done · {self._money()}")

    def note(self, message: str) -> None:
        """A line of its own above the bars (not shown when quiet)."""
        if self.enabled:
            self.console.print(message)


class StageTicker:
    """Advances one stage's bar."""

    def __init__(self, owner: ExamProgress, task: int) -> None:
        self._owner = owner
        self._task = task

    def advance(self, amount: int = 1) -> None:
        self._owner._progress.update(self._task, advance=amount, money=self._owner._money())

    def each(self, items: Iterable[T]) -> Iterator[T]:
        """`items` unchanged, advancing the bar by one as each is taken (for work that consumes a stream)."""
        for item in items:
            yield item
            self.advance()
