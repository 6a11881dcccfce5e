"""One schema-bound call of a meta-evaluation agent (the meta-judge, the referee): the validated reply,
or `Unscored` with why, never a guess.

Shared because both agents read their structured replies under the same policy: a failed call is
`call_failed`, a reply that never validated (even after the gateway's re-asks) is `Unscored`; the
caller counts it and leaves it out, it never becomes a tie.
"""

from __future__ import annotations

from examiner.core.labels import Unscored, call_failed
from examiner.llm import CallContext, Gateway, GenerationConfig, ModelCallError, Unparseable
from examiner.llm.types import M

REASONING_WORDS = 100
"""The word limit of a meta-evaluation agent's reasoning, as its prompts state it."""


def reasoning_tokens(words: int) -> int:
    """A max_tokens that holds `words` English words plus JSON/tag overhead (~1.5 tokens a word)."""
    return int(words * 1.5) + 60


async def schema_reply(gateway: Gateway, role: str, messages: list[dict[str, str]], config: GenerationConfig,
                       context: CallContext, schema: type[M], endpoint: str | None) -> M | Unscored:
    """The validated reply of one call, `call_failed` when the call failed, or `Unscored` when the reply
    never validated."""
    try:
        result = await gateway.chat(role, messages, config, context, schema=schema, endpoint=endpoint)
    except ModelCallError as exc:
        return call_failed(exc)
    if isinstance(result.parsed, Unparseable):
        return Unscored(f"unparseable: {result.parsed.error}")
    return result.parsed


__all__ = ["REASONING_WORDS", "reasoning_tokens", "schema_reply"]
