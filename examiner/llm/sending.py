"""One request on its way: its `started` record when it leaves, and what its attempts may have cost.

The gateway gives the transport one `Sending` per request (examiner.llm.transport's `Departures`), and the
transport tells it of each HTTP attempt: `ready` before the attempt waits for its replica's concurrency
slot, `leaving` once it holds the slot and is sent, `landed` when it ended. The write-ahead `started`
record is written at the first `leaving`, not before the wait: a call killed while it waited for a slot was
never sent, and counting it as possibly billed overstated the bill (5 kills: 71 shown, 63 never sent).

An attempt may be billed although its reply is never used: a timeout or a lost connection after it was
sent, an HTTP 200 whose body is cut or not a chat completion. Such an attempt gets a `lost` ledger record
with its worst case at once and its worst case is charged to the budget at once; the retry is then
admitted by the budget like a new call (the request's ticket is renewed, waiting while it does not fit,
refused when nothing else is in flight), so however many replies come late, the calls in flight pass the
cap by at most one call's worst case.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from examiner.core.config import EndpointSpec
from examiner.core.ledger_record import LedgerRecord
from examiner.llm.budget import Budget
from examiner.llm.ledger import LOST, STARTED, Ledger
from examiner.llm.transport import ChatRequest


@dataclass(frozen=True)
class Reservation:
    """What the budget holds for one request: its ticket (None without a limit), the reservation and the
    worst case, the completion tokens per choice it asks for at most, its choices and its prompt's tokens
    as counted before sending (what a lost attempt and an implausible usage are charged from)."""

    ticket: int | None
    reserved_usd: float
    worst_case_usd: float
    choices: int
    max_tokens: int = 0
    prompt_tokens: int = 0


class Sending:
    """The accounting of one request from its first attempt to its outcome (see the module docstring)."""

    def __init__(self, held: Reservation, ledger: Ledger, budget: Budget, spec: EndpointSpec,
                 head: LedgerRecord, key: str | None, batch: bool) -> None:
        """`head`: what every ledger record of the request starts with (call id, role, stage, endpoint,
        model, ...); `key` (its response cache key) and `batch` (sent through a provider's batch API): what
        its `started` record adds."""
        self.held = held
        self.ticket = held.ticket
        """The budget ticket the request holds now (a retry after a lost attempt holds a new one)."""
        self.ledger = ledger
        self.budget = budget
        self.spec = spec
        self.head = head
        self._key = key
        self._batch = batch
        self.announced = False
        """Whether the `started` record is written (an attempt left, or a batch took the request)."""
        self.out = 0
        """Attempts sent whose end is not known yet: a cancel now may be billed."""
        self.lost_usd = 0.0
        """The worst cases of this request's lost attempts, charged to the budget already."""
        self._renew = False
        self._lock = asyncio.Lock()

    def announce(self) -> None:
        """The write-ahead `started` record, once: the request leaves now."""
        if self.announced:
            return
        self.announced = True
        batch = {"batch": True} if self._batch else {}
        self.ledger.append(self.head.then(ts=time.time(), outcome=STARTED, worst_case_usd=self.held.worst_case_usd,
                                          reserved_usd=self.held.reserved_usd, cache_key=self._key, **batch))

    # ------------------------------------------------------------------ the transport's side (Departures)
    async def ready(self) -> None:
        """Before an attempt waits for its slot: after a lost attempt the budget admits the retry anew
        (BudgetExhausted when it cannot fit and no other call is in flight)."""
        if not self._renew:
            return
        async with self._lock:
            if not self._renew:
                return
            self._renew = False
            if self.ticket is not None:
                self.budget.settle(self.ticket, 0.0)
                self.ticket = None
                self.ticket = await self.budget.reserve(self.held.reserved_usd, self.held.worst_case_usd)

    def leaving(self) -> None:
        """The attempt holds its slot and is sent now."""
        self.announce()
        self.out += 1

    def landed(self, status: str, lost: ChatRequest | None = None) -> None:
        """The attempt ended with `status`; `lost`: its request, when the attempt may have been billed
        though its reply is not used (recorded and charged at its worst case now)."""
        self.out = max(0, self.out - 1)
        if lost is None:
            return
        worst = self.spec.worst_case_usd(self.held.prompt_tokens, lost.max_tokens * lost.n)
        self.ledger.append(self.head.then(ts=time.time(), outcome=LOST, status=status, worst_case_usd=worst,
                                          cost_usd=0.0))
        self.budget.charge(worst)
        self.lost_usd += worst
        self._renew = True

    # ------------------------------------------------------------------ the outcome
    def release(self, actual_usd: float) -> None:
        """Give back the ticket the request holds and book `actual_usd` in its place."""
        if self.ticket is not None:
            self.budget.settle(self.ticket, actual_usd)
            self.ticket = None


__all__ = ["Reservation", "Sending"]
