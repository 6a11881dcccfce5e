"""The model gateway and its parts. Import `Gateway` from here.

The names load on first use, so that a command reading a run's ledger (examiner.llm.ledger: gate,
compare, cost) does not import the provider clients the gateway calls (openai, httpx).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from examiner.llm.gateway import Gateway, ModelCallError, Totals
    from examiner.llm.reply import ChatReply
    from examiner.llm.types import (Attempt, CallContext, CallResult, GenerationConfig, TokenLogprob,
                                    Unparseable)

__all__ = [
    "Attempt",
    "CallContext",
    "CallResult",
    "ChatReply",
    "GenerationConfig",
    "Gateway",
    "ModelCallError",
    "TokenLogprob",
    "Totals",
    "Unparseable",
]

_TYPES = ("Attempt", "CallContext", "CallResult", "GenerationConfig", "TokenLogprob", "Unparseable")


def __getattr__(name: str) -> Any:
    """The names of __all__, imported from their module when first asked for (static imports: the
    gateway loads no module by name)."""
    if name in ("Gateway", "ModelCallError", "Totals"):
        from examiner.llm import gateway

        return getattr(gateway, name)
    if name == "ChatReply":
        from examiner.llm import reply

        return getattr(reply, name)
    if name in _TYPES:
        from examiner.llm import types

        return getattr(types, name)
    raise AttributeError(f"module 'examiner.llm' has no attribute {name!r}")
