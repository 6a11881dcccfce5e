"""Usage a reply reports, checked before it is booked.

Usage is what the ledger and the budget book, so one absurd reply could falsify both: a reply reporting
-10^6 tokens made spending negative (a capped run finished at 131 % of its cap, its report showing
-$17.24), one claiming 10^9 tokens booked $17,500 for a call billed $0.05 and left the run unable to
resume under any sane cap. A reply's usage is plausible when no count is negative, its completion tokens
are at most what the request allowed (max_tokens x n) and its prompt tokens fit the context. The context
is the endpoint's `context_tokens`, or four times the prompt as examiner counted it where that is more (a
model's tokenizer may count a text up to a few times what tiktoken does, and context_tokens may be left at
its default). An implausible usage is replaced by the request's worst case, the most it may be billed.
"""

from __future__ import annotations

from examiner.core.config import EndpointSpec
from examiner.llm.reply import ChatReply

TOKENIZER_SLACK = 4
"""How many times examiner's count of a prompt a server's count may be before it exceeds the context."""


def implausible(reply: ChatReply, max_completion: int, context_tokens: int, prompt_estimate: int) -> str | None:
    """Why the reply's usage cannot be what it was billed (None when it can)."""
    counts = reply.token_counts()
    negative = [name for name, count in counts.items() if count < 0]
    if negative:
        return "negative " + ", ".join(f"{name}={counts[name]}" for name in negative)
    if reply.completion_tokens > max_completion:
        return f"completion_tokens={reply.completion_tokens} above max_tokens x n={max_completion}"
    context = max(context_tokens, TOKENIZER_SLACK * prompt_estimate)
    if reply.prompt_tokens > context:
        return f"prompt_tokens={reply.prompt_tokens} above the context of {context}"
    return None


def worst_case_counts(spec: EndpointSpec, prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """Token counts that EndpointSpec.cost_usd prices at `spec.worst_case_usd(prompt, completion)`: every
    prompt token at the dearer of input and cache-write, every completion token at the dearer of output
    and reasoning."""
    written = prompt_tokens if (spec.price_cache_write_per_1m or 0.0) > spec.price_input_per_1m else 0
    reasoning = completion_tokens if (spec.price_reasoning_per_1m or 0.0) > spec.price_output_per_1m else 0
    return {"prompt_tokens": prompt_tokens, "cached_tokens": 0, "cache_write_tokens": written,
            "completion_tokens": completion_tokens, "reasoning_tokens": reasoning}


def at_worst_case(reply: ChatReply, spec: EndpointSpec, prompt_tokens: int, completion_tokens: int,
                  why: str) -> ChatReply:
    """The reply with the request's worst-case counts in place of its usage (`usage_source: implausible`),
    keeping what the server reported and why it was refused in `reported_usage`."""
    return reply.model_copy(update={**worst_case_counts(spec, prompt_tokens, completion_tokens),
                                    "usage_source": "implausible",
                                    "reported_usage": {**reply.token_counts(), "why": why}})


__all__ = ["TOKENIZER_SLACK", "at_worst_case", "implausible", "worst_case_counts"]
