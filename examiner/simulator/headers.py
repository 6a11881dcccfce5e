"""The request metadata the simulated backend reads: role, stage and hints as `X-Examiner-*` headers.

Why a protocol of its own: only the simulated provider (examiner.llm.providers) sends these headers, and
only the simulated server reads them; a real endpoint never sees them. One module names them for both
sides, so neither can drift from the other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

ROLE = "X-Examiner-Role"
"""The calling role (`examiner`, `candidate`, `judge`, ...): which behaviour answers."""
STAGE = "X-Examiner-Stage"
"""The step of the method that makes the call (`-`: none)."""
HINTS = "X-Examiner-Hints"
"""A JSON object of the call's facts that its prompt states in prose (round, word limit, scale, repair)."""
PREFIX = "X-Examiner-"
"""What every simulator header starts with (what must never reach a real endpoint)."""


def request_headers(role: str, stage: str, hints: Mapping[str, object]) -> dict[str, str]:
    """The headers of one simulated request: role, stage (`-` when empty) and, when there are any, the
    hints as sorted ASCII JSON (so the same call always sends the same bytes)."""
    headers = {ROLE: role, STAGE: stage or "-"}
    if hints:
        headers[HINTS] = json.dumps(dict(hints), sort_keys=True, ensure_ascii=True)
    return headers


__all__ = ["HINTS", "PREFIX", "ROLE", "STAGE", "request_headers"]
