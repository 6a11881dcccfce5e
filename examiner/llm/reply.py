"""A model's reply, typed: the raw chat completion is parsed once into a `ChatReply`, which the gateway's
parts (transport, cache, batch, accounting) pass along instead of untyped dicts.

The response cache stores a reply as JSON (`to_payload`) and reads it back (`from_payload`); the payload
keeps the shape earlier versions of examiner wrote, so a cache they filled still answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Annotated, Any

from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, BeforeValidator, ConfigDict

from examiner.core.tokens import count_message_tokens, count_tokens
from examiner.llm.ledger import TOKEN_FIELDS
from examiner.llm.types import Attempt, CallResult, TokenLogprob

Messages = list[dict[str, str]]
"""A conversation in the chat-completions shape: [{role, content}, ...]."""

Count = Annotated[int, BeforeValidator(lambda value: value or 0)]
"""A token count; a payload's null reads as 0."""
LogprobRow = tuple[str, float, dict[str, float]]
"""One generated token, its log-probability and the top alternatives, as the cache stores them."""


class ChatReply(BaseModel):
    """What one request (or its n single-choice requests, merged) got back: every choice's text, the first
    choice's logprobs and finish reason, the token usage (reported, or counted with tiktoken), the id and
    model the server named, and the attempts it took."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    texts: list[str]
    logprobs: list[LogprobRow] | None = None
    finish_reason: str | None = None
    prompt_tokens: Count = 0
    cached_tokens: Count = 0
    cache_write_tokens: Count = 0
    completion_tokens: Count = 0
    reasoning_tokens: Count = 0
    usage_source: str = "api"
    """`api` when the endpoint reported usage, `tiktoken` when examiner counted the tokens itself,
    `implausible` when the reported usage was refused and the counts are the request's worst case."""
    request_id: str = ""
    attempts: list[Attempt] = []
    model: str = ""
    """The model the server says answered (empty in a payload cached before examiner kept it)."""
    replica: str = ""
    """Root URL of the replica that answered, for an endpoint with replicas (empty otherwise)."""
    batch: bool = False
    """Answered through the provider's batch API."""
    reported_usage: dict[str, Any] | None = None
    """The usage the server reported and why it was refused, where it was implausible and the counts above
    are the request's worst case instead (examiner.llm.usage_check; None otherwise)."""

    @classmethod
    def from_completion(cls, completion: ChatCompletion, messages: Messages, attempts: Sequence[Attempt],
                        header_id: str | None = None) -> "ChatReply":
        """Parse a chat completion (with at least one choice). Without reported usage the tokens are
        counted with tiktoken; the request id is the `x-request-id` header's, else the completion's."""
        texts = [(choice.message.content or "") if choice.message else "" for choice in completion.choices]
        first = completion.choices[0]
        logprobs: list[LogprobRow] | None = None
        if first.logprobs is not None and first.logprobs.content:
            logprobs = [(item.token, item.logprob, {alt.token: alt.logprob for alt in (item.top_logprobs or [])})
                        for item in first.logprobs.content]
        usage = completion.usage
        if usage is not None and usage.prompt_tokens is not None:
            tokens, source = _reported_tokens(usage), "api"
        else:
            tokens = {"prompt_tokens": count_message_tokens(messages),
                      "completion_tokens": sum(count_tokens(t) for t in texts)}
            source = "tiktoken"
        return cls(texts=texts, logprobs=logprobs, finish_reason=first.finish_reason, **tokens,
                   usage_source=source, request_id=header_id or completion.id or uuid.uuid4().hex,
                   attempts=list(attempts), model=completion.model or "")

    @classmethod
    def from_payload(cls, payload: Mapping[str, object]) -> "ChatReply":
        """A reply read back from the response cache."""
        return cls.model_validate(payload)

    def to_payload(self) -> dict[str, Any]:
        """The JSON the response cache stores (`replica` and `batch` only where they are set)."""
        payload = self.model_dump(mode="json", exclude={"replica", "batch", "reported_usage"})
        payload["attempts"] = [asdict(a) for a in self.attempts]
        if self.replica:
            payload["replica"] = self.replica
        if self.batch:
            payload["batch"] = True
        if self.reported_usage is not None:
            payload["reported_usage"] = self.reported_usage
        return payload

    def token_counts(self) -> dict[str, int]:
        """The token counts by ledger field name (examiner.llm.ledger.TOKEN_FIELDS)."""
        return {name: int(getattr(self, name)) for name in TOKEN_FIELDS}

    def merged(self, others: Sequence["ChatReply"]) -> "ChatReply":
        """This reply with the choices, tokens and attempts of `others` (the rest of an n-sample fan-out)
        added; the first reply's logprobs, finish reason and ids stand for the whole."""
        parts = [self, *others]
        totals = {name: sum(getattr(p, name) for p in parts) for name in TOKEN_FIELDS}
        return self.model_copy(update={"texts": [p.texts[0] if p.texts else "" for p in parts],
                                       "attempts": [a for p in parts for a in p.attempts], **totals})

    def result(self, *, endpoint: str, model: str, hit: bool, latency_s: float) -> CallResult[str]:
        """The caller's view of this reply, not yet priced (accounting prices it). A cache hit made no
        attempts and names no replica."""
        text = self.texts[0] if self.texts else ""
        return CallResult(
            text=text,
            parsed=text,
            texts=list(self.texts),
            logprobs=[TokenLogprob(t, lp, top) for t, lp, top in self.logprobs] if self.logprobs else None,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cached_tokens=self.cached_tokens,
            cache_write_tokens=self.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens,
            usage_source=self.usage_source,
            cache_hit=hit,
            attempts=[] if hit else list(self.attempts),
            request_id=self.request_id,
            endpoint=endpoint,
            replica="" if hit else self.replica,
            model=model,
            latency_s=latency_s,
            finish_reason=self.finish_reason,
        )


def _reported_tokens(usage: CompletionUsage) -> dict[str, int]:
    """Token counts of an OpenAI `usage` object: the totals, and the details that are parts of them where
    the endpoint reports them (prompt_tokens_details.cached_tokens and .cache_write_tokens,
    completion_tokens_details.reasoning_tokens); absent details count 0."""
    prompt_details = usage.prompt_tokens_details
    completion_details = usage.completion_tokens_details
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens or 0,
        "cached_tokens": getattr(prompt_details, "cached_tokens", None) or 0,
        "cache_write_tokens": getattr(prompt_details, "cache_write_tokens", None) or 0,
        "reasoning_tokens": getattr(completion_details, "reasoning_tokens", None) or 0,
    }


__all__ = ["ChatReply", "Messages"]
