"""A fan-out's slot, which an item gives back while its calls wait in a provider batch.

examiner.llm.fanout.run_bounded lets `limit` items run at once. A call to a batch endpoint waits minutes
to hours for its batch; if it kept its item's slot, a step could put at most `limit` calls in a batch
and would then wait a whole batch round trip per `limit` items. So run_bounded runs each item in a
`Slot` (a context variable, seen by every call the item makes, in child tasks too), and the gateway
waits for a batch inside `parked()`: while at least one of the item's calls waits, the slot serves the
next item; the item takes a slot again before it goes on with the reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar, Token
from types import TracebackType

_CURRENT: ContextVar["Slot | None"] = ContextVar("examiner_fan_out_slot", default=None)


class Slot:
    """One item's place under a fan-out's semaphore. Use as `async with Slot(gate):` around the item."""

    def __init__(self, gate: asyncio.Semaphore) -> None:
        self._gate = gate
        self._held = False
        self._parked = 0
        self._token: Token[Slot | None] | None = None

    async def __aenter__(self) -> "Slot":
        await self._gate.acquire()
        self._held = True
        self._token = _CURRENT.set(self)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None
        if self._held:
            self._held = False
            self._gate.release()


@asynccontextmanager
async def parked() -> AsyncIterator[None]:
    """Give the current item's slot back while the body waits (no-op outside a fan-out). The slot is
    taken again when the item's last parked call returns; a cancelled wait does not take it again (the
    item is ending)."""
    slot = _CURRENT.get()
    if slot is None:
        yield
        return
    slot._parked += 1
    if slot._held:
        slot._held = False
        slot._gate.release()
    cancelled = False
    try:
        yield
    except asyncio.CancelledError:
        cancelled = True
        raise
    finally:
        slot._parked -= 1
        if not cancelled and slot._parked == 0 and not slot._held:
            await slot._gate.acquire()
            slot._held = True


__all__ = ["Slot", "parked"]
