"""The model gateway and its parts. Import `Gateway` from here."""

from examiner.llm.gateway import Gateway, ModelCallError, Totals
from examiner.llm.types import Attempt, CallContext, CallResult, TokenLogprob, Unparseable

__all__ = [
    "Attempt",
    "CallContext",
    "CallResult",
    "Gateway",
    "ModelCallError",
    "TokenLogprob",
    "Totals",
    "Unparseable",
]
