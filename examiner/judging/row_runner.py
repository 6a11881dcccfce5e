"""Judging every dataset row under the one runner (examiner.llm.fanout.run_bounded), keeping going when a
row's model call fails.

A failed call (after the gateway's retries) or a budget stop becomes a failure record for that row,
never a verdict; the run goes on and the report counts failures.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from examiner.core.labels import Unscored, unscored_reason
from examiner.llm.fanout import run_bounded

T = TypeVar("T")

CALL_FAILED = "model call failed: "
"""How a failure record's `unscored` begins when its model call failed (not a budget stop)."""


@dataclass
class RunFlags:
    """What went wrong across a run, for the report and the exit code; and who to tell as rows finish."""

    budget_exhausted: bool = False
    failed_calls: int = 0
    on_row_done: Callable[[], None] | None = None
    """Called as each row finishes, judged or not (e.g. a progress bar's advance)."""


async def judge_rows(
    rows: Sequence[T],
    work: Callable[[T], Awaitable[list[dict[str, Any]]]],
    on_failure: Callable[[T, str], list[dict[str, Any]]],
    flags: RunFlags,
) -> list[dict[str, Any]]:
    """Records of every row, in row order: `work`'s, or `on_failure`'s when the row could not be judged."""
    done = flags.on_row_done
    summary = await run_bounded(rows, work, on_done=None if done is None else lambda _outcome: done())
    flags.budget_exhausted = flags.budget_exhausted or summary.budget_stopped
    flags.failed_calls += summary.failed
    records: list[dict[str, Any]] = []
    for row, outcome in zip(rows, summary.outcomes):
        if outcome.budget_stopped:
            records += on_failure(row, "not judged: budget exhausted")
        elif outcome.error:
            records += on_failure(row, f"{CALL_FAILED}{outcome.error}")
        else:
            records += outcome.value or []
    return records


def score_columns(score: float | Unscored) -> dict[str, Any]:
    """A grade in the judgments JSONL: `score`, and `unscored` saying why there is none (score null)."""
    return {"score": None if isinstance(score, Unscored) else score, "unscored": unscored_reason(score)}
