"""The model gateway and its parts. Import `Gateway` from here."""

from examiner.llm.gateway import Gateway, ModelCallError, Totals
from examiner.llm.reply import ChatReply
from examiner.llm.types import Attempt, CallContext, CallResult, GenerationConfig, TokenLogprob, Unparseable

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
