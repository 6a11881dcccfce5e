"""Spending limit: every call reserves what it is expected to cost before it is sent, and the calls in
flight may together pass the limit by no more than one call's worst case.

A call's reservation is its prompt's cost (tiktoken count) plus a completion bound learned from the
run's finished calls of the same role and stage (`CompletionBounds`: 1.25 times the longest completion
seen, plus 16 tokens, never above max_tokens; max_tokens itself before any call of that role and stage
has finished), at the endpoint's dearest prices. Its worst case is the same with max_tokens. A call is
admitted when
  (a) spent + reserved + its reservation stays within the limit, and
  (b) spent + the worst cases of the calls already in flight stay within the limit,
and otherwise waits for a call in flight to settle (it is refused, BudgetExhausted, when none is in
flight). (b) is what bounds the overshoot: whatever the replies turn out to be, the calls in flight
before a call was admitted could not pass the cap, so the most the run can spend is the limit plus the
worst case of one call. (a) is what lets a run use its cap: reservations near what calls really cost
(a judge call reserving max_tokens held 5x what it spent), so the stop comes when the cap is nearly
spent, not at a fraction of it. Why the longest completion seen and a margin rather than a quantile:
the calls of one role and stage ask for replies of one shape, a handful of finished calls already show
their length, and a reply longer than the bound is safe by (b) and raises the bound at once.

After the call its reservation is replaced by the real cost. The limit is the run's, not the
process's: a resumed run starts with `spent_usd` read back from its ledger (examiner.llm.ledger.spent_usd),
so a kill and a resume cannot spend the cap twice.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from examiner.core.errors import BudgetExhausted

MARGIN = 1.25
"""A completion bound is this times the longest completion seen for its role and stage ..."""
PAD_TOKENS = 16
"""... plus this many tokens (short replies vary by a few tokens more than 25 %)."""


class CompletionBounds:
    """Per (role, stage): the longest completion (tokens per choice) of the run's finished calls, and the
    completion bound a new call reserves from it."""

    def __init__(self) -> None:
        self._longest: dict[tuple[str, str], int] = {}

    def observe(self, key: tuple[str, str], completion_tokens: int) -> None:
        """A finished call's completion tokens (per choice)."""
        if completion_tokens > self._longest.get(key, -1):
            self._longest[key] = int(completion_tokens)

    def bound(self, key: tuple[str, str], max_tokens: int) -> int:
        """The completion tokens a call of this role and stage reserves (per choice): max_tokens before any
        call of it finished, then MARGIN times the longest seen plus PAD_TOKENS, never above max_tokens."""
        longest = self._longest.get(key)
        if longest is None:
            return max_tokens
        return min(max_tokens, math.ceil(longest * MARGIN) + PAD_TOKENS)


@dataclass
class Budget:
    """Dollars allowed (None = unlimited), dollars spent (by this run, earlier processes included),
    dollars reserved by calls in flight, and the worst case of the calls in flight (`at_risk_usd`)."""

    limit_usd: float | None = None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    at_risk_usd: float = 0.0
    refused: int = 0
    _next_ticket: int = field(default=0, repr=False)
    _tickets: dict[int, tuple[float, float]] = field(default_factory=dict, repr=False)
    _settled: asyncio.Event | None = field(default=None, repr=False)
    _settled_loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def try_reserve(self, estimate_usd: float, worst_case_usd: float | None = None) -> int | None:
        """Hold `estimate_usd` (and count `worst_case_usd`, default the estimate, at risk) for a call about
        to be sent: its ticket; None when it must wait for a call in flight to settle (see the module
        docstring); BudgetExhausted when it cannot fit and nothing is in flight."""
        worst = max(estimate_usd, worst_case_usd if worst_case_usd is not None else estimate_usd)
        if self.limit_usd is not None:
            if self.spent_usd + self.reserved_usd + estimate_usd > self.limit_usd:
                if self._tickets:
                    return None  # calls in flight may settle below what they hold
                self.refused += 1
                raise BudgetExhausted(
                    f"budget ${self.limit_usd:.4f} reached: spent ${self.spent_usd:.4f}, "
                    f"next call is expected to cost up to ${estimate_usd:.4f}"
                )
            if self._tickets and self.spent_usd + self.at_risk_usd > self.limit_usd:
                return None
        self._next_ticket += 1
        self._tickets[self._next_ticket] = (estimate_usd, worst)
        self.reserved_usd += estimate_usd
        self.at_risk_usd += worst
        return self._next_ticket

    async def reserve(self, estimate_usd: float, worst_case_usd: float | None = None) -> int:
        """`try_reserve`, waiting for calls in flight to settle while it says to."""
        while (ticket := self.try_reserve(estimate_usd, worst_case_usd)) is None:
            loop = asyncio.get_running_loop()
            if self._settled is None or self._settled_loop is not loop:  # a gateway may outlive a loop
                self._settled, self._settled_loop = asyncio.Event(), loop
            await self._settled.wait()
        return ticket

    def settle(self, ticket: int, actual_usd: float) -> None:
        """Release the reservation and book the real cost (0 for a failed request that was not billed)."""
        estimate, worst = self._tickets.pop(ticket, (0.0, 0.0))
        self.reserved_usd -= estimate
        self.at_risk_usd -= worst
        if not self._tickets:  # no drift from float sums once nothing is in flight
            self.reserved_usd = self.at_risk_usd = 0.0
        self.spent_usd += actual_usd
        if self._settled is not None:
            self._settled.set()
            self._settled = None

    def charge(self, usd: float) -> None:
        """Book dollars that may have been billed beside a call's reservation: the worst case of an attempt
        whose reply came late or cut (examiner.llm.sending); its call then holds a new reservation."""
        self.spent_usd += usd

    @property
    def exhausted(self) -> bool:
        return self.refused > 0
