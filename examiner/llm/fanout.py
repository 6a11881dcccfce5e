"""One bounded concurrent runner, with one budget and failure policy, for every method.

The exam's nodes, `examiner judge` and `examiner meta` all fan a list of items out to async work that
calls models. They share this policy:

- at most `limit` items are in flight (the gateway separately bounds calls per endpoint); an item whose
  calls wait in a provider batch gives its place to the next item meanwhile (examiner.llm.slots), so
  a step's calls to a batch endpoint all reach one batch;
- a failed model call (after the gateway's retries) ends only its own item, as an outcome with the
  error; each distinct error is logged once per fan-out (a dead endpoint is one warning, not one per item);
- the first budget stop ends its item and every item not yet started: those are reported as
  budget-stopped and never sent, so a stopped run does not keep reserving money;
- any other exception is a bug and propagates.

Outcomes come back in the order of the items, whatever order they finished in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from examiner.core.errors import BudgetExhausted
from examiner.llm.transport import ModelCallError
from examiner.llm.slots import Slot

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_LIMIT = 256
"""Items in flight by default: enough to keep every endpoint's own concurrency limit busy."""


@dataclass
class Outcome(Generic[R]):
    """What one item produced: a value, or why it has none."""

    value: R | None = None
    budget_stopped: bool = False
    """The budget ran out during this item, or before it started."""
    error: str = ""
    """The model call failure that ended this item."""

    @property
    def ok(self) -> bool:
        return not self.budget_stopped and not self.error


@dataclass
class RunSummary(Generic[R]):
    """Every outcome of one fan-out, in item order, with the two ways a fan-out can fall short."""

    outcomes: list[Outcome[R]] = field(default_factory=list)

    @property
    def values(self) -> list[R]:
        """The values of the items that produced one (None values are left out)."""
        return [o.value for o in self.outcomes if o.ok and o.value is not None]

    @property
    def budget_stopped(self) -> bool:
        return any(o.budget_stopped for o in self.outcomes)

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes if o.error)

    @property
    def all_failed(self) -> bool:
        """True when there was work and every item failed on a model call (an endpoint that is down)."""
        return bool(self.outcomes) and all(o.error for o in self.outcomes)

    def first_error(self) -> str:
        return next((o.error for o in self.outcomes if o.error), "")


async def run_bounded(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    *,
    limit: int = DEFAULT_LIMIT,
    on_done: Callable[[Outcome[R]], None] | None = None,
) -> RunSummary[R]:
    """Run `work(item)` for every item under the policy above; `on_done` sees each outcome as it lands."""
    gate = asyncio.Semaphore(max(1, limit))
    stopped = asyncio.Event()
    logged: set[str] = set()

    async def one(item: T) -> Outcome[R]:
        async with Slot(gate):
            if stopped.is_set():
                outcome: Outcome[R] = Outcome(budget_stopped=True)
            else:
                try:
                    outcome = Outcome(value=await work(item))
                except BudgetExhausted:
                    stopped.set()
                    outcome = Outcome(budget_stopped=True)
                except ModelCallError as exc:
                    if str(exc) not in logged:
                        logged.add(str(exc))
                        log.warning("model call failed: %s", exc)
                    outcome = Outcome(error=str(exc))
        if on_done is not None:
            on_done(outcome)
        return outcome

    return RunSummary(list(await asyncio.gather(*(one(item) for item in items))))


__all__ = ["DEFAULT_LIMIT", "Outcome", "RunSummary", "run_bounded"]
