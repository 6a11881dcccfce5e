"""Text one model wrote, cut to a cap before it goes into another model's prompt.

Why: a target's answer, a judge's reason or a reviser's revision is chosen by a model, and a model
under test could make the judge's prompt as long (and as costly) as it liked: a 400,000-character
answer made a 402,051-character judge prompt. Every such text goes in through `cut_passed`, which keeps
its first characters and ends it with a marker the reading model (and a person) can see, so a judge knows
it read a part; reports count the texts that were cut (`count_cut`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_MAX_PASSED_CHARS = 12_000
"""Settings.max_passed_chars by default: about 3,000 tokens, fifteen times a 200-word answer."""
MIN_PASSED_CHARS = 200
"""The smallest cap a setting may name: room for the marker and some text."""


def cut_marker(shown: int, total: int) -> str:
    """The line that ends a cut text: how much of it the reading model was shown."""
    return f"\n[... cut by examiner: {shown:,} of {total:,} characters shown]"


def cut_passed(text: str, limit: int) -> str:
    """`text` as it is when it has at most `limit` characters; else its start and the marker, together at
    most `limit` characters."""
    if len(text) <= limit:
        return text
    shown = max(0, limit - len(cut_marker(limit, len(text))))
    return text[:shown] + cut_marker(shown, len(text))


def is_cut(text: str, limit: int) -> bool:
    """Whether `cut_passed(text, limit)` cuts it."""
    return len(text) > limit


def count_cut(texts: Iterable[str], limit: int) -> int:
    """How many of `texts` are cut when passed on: the figure the reports show."""
    return sum(1 for text in texts if is_cut(text, limit))


def run_limit(config: Mapping[str, Any]) -> int:
    """The cap a run used, from its saved settings (config.yaml); the default for a run written before the
    setting existed."""
    return int(config.get("max_passed_chars") or DEFAULT_MAX_PASSED_CHARS)
