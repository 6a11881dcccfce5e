"""Text from one model as another model's prompt may hold it: cut to the run's `max_passed_chars`.

Why here: every agent that shows a model's answer, reason, revision or statement to another model holds
the gateway, whose settings name the cap; one call per such value keeps the cut (and its marker,
examiner.core.passed_text) the same everywhere.
"""

from __future__ import annotations

from examiner.core.passed_text import cut_passed
from examiner.llm import Gateway


def passed(gateway: Gateway, text: str) -> str:
    """`text` cut to `gateway.settings.max_passed_chars`, with the marker saying so when it was cut."""
    return cut_passed(text, gateway.settings.max_passed_chars)
