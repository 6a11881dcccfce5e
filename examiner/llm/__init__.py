"""The model gateway and its parts. Import `Gateway` from here."""

from examiner.llm.gateway import Gateway, ModelCallError, Totals
from examiner.llm.types import Attempt, CallContext, CallResult, GenerationConfig, TokenLogprob, Unparseable

__all__ = [
    "Attempt",
    "CallContext",
    "CallResult",
    "GenerationConfig",
    "Gateway",
    "ModelCallError",
    "TokenLogprob",
    "Totals",
    "Unparseable",
]
