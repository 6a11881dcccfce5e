"""Replicas of one endpoint: several servers of the same model (e.g. four vLLM servers) behind one name.

An endpoint lists them as `base_url` plus `replicas` (EndpointSpec). Each replica has its own client and
its own limits (the endpoint's `max_concurrency` and `tokens_per_minute` apply to each replica, since
each server has its own capacity). The gateway sends each call to the live replica with the fewest
requests outstanding (ties: the one that was sent fewest, then the first listed), so sequential calls
go round the replicas and concurrent ones fill the least busy first.

Health: a connection error, timeout or 5xx counts as a failure of the replica; DOWN_AFTER failures in a
row (across all calls) mark it down for the endpoint's `replica_cooloff_s`. A down replica gets no new
calls while another is up; a call already retrying on it moves to another replica at once. After the
cool-off it is tried again: one success brings it back, one more failure sends it down again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from openai import AsyncOpenAI

from examiner.core.config import EndpointSpec
from examiner.llm.limits import TokenRateLimiter

DOWN_AFTER = 3
"""Failures in a row (connection errors, timeouts, 5xx) after which a replica is marked down."""


class Replica:
    """One server of an endpoint: its client, its own limits and its health (created in the event loop)."""

    def __init__(self, base_url: str, spec: EndpointSpec) -> None:
        self.base_url = base_url
        self.client = AsyncOpenAI(base_url=base_url, api_key=spec.api_key(), max_retries=0, timeout=spec.timeout_s)
        self.slots = asyncio.Semaphore(spec.max_concurrency)
        self.tpm = TokenRateLimiter(spec.tokens_per_minute) if spec.tokens_per_minute else None
        self.cooloff_s = spec.replica_cooloff_s
        self.outstanding = 0
        """Calls on this replica now (waiting for a slot, or sent and not yet answered)."""
        self.sent = 0
        """Attempts sent to this replica so far."""
        self.failures = 0
        """Failures in a row since the last success."""
        self.down_until = 0.0
        """time.monotonic() until which the replica gets no new calls (0: up)."""

    def up(self, now: float | None = None) -> bool:
        return (time.monotonic() if now is None else now) >= self.down_until

    def succeeded(self) -> None:
        self.failures = 0
        self.down_until = 0.0

    def failed(self) -> None:
        """Count a transport failure; the DOWN_AFTER-th in a row (or any one after a cool-off, when the
        count was not reset by a success) marks the replica down for its cool-off."""
        self.failures += 1
        if self.failures >= DOWN_AFTER:
            self.down_until = time.monotonic() + self.cooloff_s


def choose(replicas: Sequence[Replica], tried: Sequence[Replica] = (), now: float | None = None) -> Replica | None:
    """The replica for the next call: among those not `tried` by this call, an up one with the fewest
    outstanding requests (ties: fewest sent, then the first listed); when every untried replica is down,
    the one whose cool-off ends first (a call is never refused while a replica is left to try). None
    when every replica was tried."""
    now = time.monotonic() if now is None else now
    order = {id(r): i for i, r in enumerate(replicas)}
    left = [r for r in replicas if all(r is not t for t in tried)]
    if not left:
        return None
    live = [r for r in left if r.up(now)]
    if not live:
        return min(left, key=lambda r: (r.down_until, order[id(r)]))
    return min(live, key=lambda r: (r.outstanding, r.sent, order[id(r)]))


__all__ = ["DOWN_AFTER", "Replica", "choose"]
