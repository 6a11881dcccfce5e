"""Spending limit: every call reserves its worst-case cost before it is sent.

The estimate is the tiktoken prompt count plus max_tokens (times n) at the endpoint's prices. A call is
refused when spent + reserved + estimate would pass the limit, so concurrent calls can never together
overshoot it; after the call its reservation is replaced by the real cost.

The limit is the run's, not the process's: a resumed run starts with `spent_usd` read back from its
ledger (examiner.llm.ledger.spent_usd), so a kill and a resume cannot spend the cap twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from examiner.errors import BudgetExhausted


@dataclass
class Budget:
    """Dollars allowed (None = unlimited), dollars spent (by this run, earlier processes included),
    dollars reserved by calls in flight."""

    limit_usd: float | None = None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    refused: int = 0
    _next_ticket: int = field(default=0, repr=False)
    _tickets: dict[int, float] = field(default_factory=dict, repr=False)

    def reserve(self, estimate_usd: float) -> int:
        """Hold `estimate_usd` for a call about to be sent; BudgetExhausted if it might not fit."""
        if self.limit_usd is not None and self.spent_usd + self.reserved_usd + estimate_usd > self.limit_usd:
            self.refused += 1
            raise BudgetExhausted(
                f"budget ${self.limit_usd:.4f} reached: spent ${self.spent_usd:.4f}, "
                f"next call could cost up to ${estimate_usd:.4f}"
            )
        self._next_ticket += 1
        self._tickets[self._next_ticket] = estimate_usd
        self.reserved_usd += estimate_usd
        return self._next_ticket

    def settle(self, ticket: int, actual_usd: float) -> None:
        """Release the reservation and book the real cost (0 for a failed request that was not billed)."""
        self.reserved_usd -= self._tickets.pop(ticket, 0.0)
        self.spent_usd += actual_usd

    @property
    def exhausted(self) -> bool:
        return self.refused > 0
