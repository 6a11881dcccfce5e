"""Value types that cross the gateway boundary: what a caller asks for and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Unparseable:
    """Structured output that never validated, even after re-asking. Carries the raw text; never a value."""

    raw: str
    error: str


@dataclass(frozen=True)
class Attempt:
    """One HTTP attempt of a call: outcome and any wait before the next attempt."""

    status: str
    """`ok`, an HTTP status code as text (`429`, `500`), `timeout`, `connection`, `empty` or `invalid`."""
    latency_s: float
    wait_s: float = 0.0
    detail: str = ""


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log-probability and the most likely alternatives."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CallContext:
    """Bookkeeping attached to a call for the ledger: who asked, in which stage and round, about which units."""

    role: str
    stage: str = ""
    round: int = 0
    unit_ids: tuple[str, ...] = ()
    item_id: str = ""


@dataclass
class CallResult(Generic[T]):
    """The outcome of one gateway call (possibly several attempts, possibly a cache hit)."""

    text: str
    """Raw text of the first choice (empty when the endpoint returned no choices)."""
    parsed: T | Unparseable | None = None
    """Validated object when a schema was given; Unparseable when it never validated; None without schema."""
    texts: list[str] = field(default_factory=list)
    """Every choice's text when n > 1."""
    logprobs: list[TokenLogprob] | None = None
    """Per-token logprobs of the first choice, when requested and returned."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_source: str = "api"
    """`api` when the endpoint reported usage, `tiktoken` when examiner counted the tokens itself."""
    cost_usd: float = 0.0
    cache_hit: bool = False
    attempts: list[Attempt] = field(default_factory=list)
    request_id: str = ""
    endpoint: str = ""
    model: str = ""
    latency_s: float = 0.0
    finish_reason: str | None = None

    @property
    def ok(self) -> bool:
        """True when structured output validated (or no schema was asked for and text came back)."""
        if self.parsed is None:
            return bool(self.text)
        return not isinstance(self.parsed, Unparseable)

    def value(self) -> T:
        """The validated object; raises ValueError for Unparseable results (callers should check `ok`)."""
        if self.parsed is None or isinstance(self.parsed, Unparseable):
            raise ValueError("call result has no validated value")
        return self.parsed

    def extra(self) -> dict[str, Any]:
        """Fields for the ledger record."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "usage_source": self.usage_source,
            "cost_usd": self.cost_usd,
            "cache_hit": self.cache_hit,
        }
