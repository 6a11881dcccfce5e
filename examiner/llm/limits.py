"""Per-endpoint rate limits: a concurrency semaphore and an optional tokens-per-minute window."""

from __future__ import annotations

import asyncio
import time
from collections import deque


class TokenRateLimiter:
    """Sliding one-minute window over tokens sent; `acquire(n)` waits until n more tokens fit."""

    def __init__(self, tokens_per_minute: int, window_s: float = 60.0) -> None:
        self.capacity = tokens_per_minute
        self.window_s = window_s
        self._events: deque[tuple[float, int]] = deque()
        self._used = 0
        self._lock = asyncio.Lock()

    def _expire(self, now: float) -> None:
        while self._events and now - self._events[0][0] >= self.window_s:
            self._used -= self._events.popleft()[1]

    async def acquire(self, tokens: int) -> float:
        """Book `tokens` (clipped to capacity); returns the seconds waited."""
        tokens = min(tokens, self.capacity)
        waited = 0.0
        async with self._lock:
            while True:
                now = time.monotonic()
                self._expire(now)
                if self._used + tokens <= self.capacity:
                    self._events.append((now, tokens))
                    self._used += tokens
                    return waited
                pause = self.window_s - (now - self._events[0][0]) + 0.001
                waited += pause
                await asyncio.sleep(pause)
