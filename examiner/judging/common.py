"""Running one coroutine per dataset row, keeping going when a row's model call fails.

A failed call (after the gateway's retries) or a budget stop becomes an error record for that row,
never a verdict; the run goes on and the report counts failures.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from examiner.errors import BudgetExhausted
from examiner.llm.gateway import ModelCallError

T = TypeVar("T")


@dataclass
class RunFlags:
    """What went wrong across a run, for the report and the exit code."""

    budget_exhausted: bool = False
    failed_calls: int = 0


async def per_row(
    rows: Sequence[T],
    work: Callable[[T], Awaitable[list[dict[str, Any]]]],
    on_error: Callable[[T, str], list[dict[str, Any]]],
    flags: RunFlags,
    concurrency: int = 256,
) -> list[dict[str, Any]]:
    """Records of every row, in row order; `concurrency` caps rows in flight (the gateway caps calls)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(row: T) -> list[dict[str, Any]]:
        if flags.budget_exhausted:
            return on_error(row, "not judged: budget exhausted")
        async with gate:
            try:
                return await work(row)
            except BudgetExhausted as exc:
                flags.budget_exhausted = True
                return on_error(row, f"not judged: {exc}")
            except ModelCallError as exc:
                flags.failed_calls += 1
                return on_error(row, f"model call failed: {exc}")

    results = await asyncio.gather(*(one(r) for r in rows))
    return [record for group in results for record in group]
