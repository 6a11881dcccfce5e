"""Value types that cross the gateway boundary: what a caller asks for and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")
"""What a call yields: `str` for a text call, the schema's model for a structured one."""
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Unparseable:
    """Structured output that never validated, even after re-asking. Carries the raw text; never a value."""

    raw: str
    error: str


@dataclass(frozen=True)
class Attempt:
    """One HTTP attempt of a call: outcome and any wait before the next attempt."""

    status: str
    """`ok`, an HTTP status code as text (`429`, `500`), `timeout`, `connection`, `empty`, `invalid` or
    `foreign` (a 2xx reply that is not a chat completion, e.g. an HTML page)."""
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
class GenerationConfig:
    """How the model should generate: what goes into the request body (and so into the cache key)."""

    max_tokens: int = 512
    """Upper bound on completion tokens per choice (also what the budget reserves before the call)."""
    temperature: float | None = None
    """Sampling temperature; None takes the endpoint's configured temperature."""
    n: int = 1
    """Number of choices; an endpoint without `supports_n` gets n requests with seeds seed, seed+1, ..."""
    logprobs: bool = False
    """Ask for per-token log-probabilities of the first choice."""
    top_logprobs: int | None = None
    """How many alternatives per token to return with `logprobs` (None or 0: none)."""
    seed: int | None = None
    """Sampling seed; None takes the endpoint's configured seed (if any)."""
    stop: tuple[str, ...] = ()
    """Stop sequences (empty: none)."""


@dataclass(frozen=True)
class CallContext:
    """Who asks and why: recorded in the ledger and sent to the endpoint as request metadata, never
    part of the prompt. The simulated backend chooses its behaviour from it (with the role)."""

    stage: str = ""
    """The step of the method that makes the call (`question`, `answer`, `referee`, ...); sent as the
    `X-Examiner-Stage` header and recorded in the ledger."""
    round: int = 0
    """Exam round or debate round (0: not in a round); recorded in the ledger and sent in the hints."""
    unit_ids: tuple[str, ...] = ()
    """Knowledge units the call is about; recorded in the ledger."""
    item_id: str = ""
    """Dataset item the call is about; recorded in the ledger."""
    hints: Mapping[str, Any] = field(default_factory=dict)
    """JSON-able facts of the call that a prompt states in prose (word limit, score scale, last round,
    ...), sent as the `X-Examiner-Hints` JSON header so that a test backend need not read the prose.
    Not recorded in the ledger and not part of the cache key."""


@dataclass
class CallResult(Generic[T]):
    """The outcome of one gateway call (possibly several attempts, possibly a cache hit)."""

    text: str
    """Raw text of the first choice (empty when the endpoint returned no choices)."""
    parsed: T | Unparseable
    """The call's value: the text itself for a text call; for a call with a schema the validated object,
    or Unparseable when it never validated (even after re-asking)."""
    texts: list[str] = field(default_factory=list)
    """Every choice's text when n > 1."""
    logprobs: list[TokenLogprob] | None = None
    """Per-token logprobs of the first choice, when requested and returned."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens read from the provider's prompt cache (part of prompt_tokens; 0 when not reported)."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's prompt cache (part of prompt_tokens; 0 when not reported)."""
    reasoning_tokens: int = 0
    """Hidden reasoning tokens (part of completion_tokens; 0 when not reported)."""
    usage_source: str = "api"
    """`api` when the endpoint reported usage, `tiktoken` when examiner counted the tokens itself,
    `implausible` when the reported usage was refused and the tokens are the request's worst case
    (examiner.llm.usage_check)."""
    batch: bool = False
    """Answered through the provider's batch API (billed at the endpoint's batch_price_factor)."""
    cost_usd: float = 0.0
    cache_hit: bool = False
    attempts: list[Attempt] = field(default_factory=list)
    request_id: str = ""
    endpoint: str = ""
    replica: str = ""
    """Root URL of the server that answered, for an endpoint with replicas (empty otherwise and on a hit)."""
    model: str = ""
    latency_s: float = 0.0
    finish_reason: str | None = None

    @property
    def ok(self) -> bool:
        """True when structured output validated (or, for a text call, when text came back)."""
        return not isinstance(self.parsed, Unparseable) and self.parsed != ""

    def value(self) -> T:
        """The call's value; raises ValueError for Unparseable results (callers should check `ok`)."""
        if isinstance(self.parsed, Unparseable):
            raise ValueError("call result has no validated value")
        return self.parsed

    def extra(self) -> dict[str, Any]:
        """Fields for the ledger record."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "usage_source": self.usage_source,
            "batch": self.batch,
            "cost_usd": self.cost_usd,
            "cache_hit": self.cache_hit,
        }
