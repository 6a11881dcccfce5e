"""The parts every exam health check is made of: a status, a threshold, an offending example, a check's
outcome, and the share check most of them are (health.py and health_questions.py build on these)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

EXAMPLES = 5
"""Offending items a check keeps as examples."""
REF_MARK = re.compile(r"\s?\[ref:[^\]]*\]")

Status = Literal["pass", "warn", "fail", "info", "not_measured", "incomplete"]
"""A check's status: pass, warn, fail; `info` (shown, never counts); `not_measured` (a check that should
have been made was not: the self-check of a frozen-paper re-sit). The run's: fail, warn, `incomplete`
(nothing warned or failed but a check was not measured: not a pass it did not check), else pass."""


@dataclass(frozen=True)
class Threshold:
    """Where a figure starts to warn and to fail. `higher_is_worse`: warn above `warn`, fail above `fail`;
    else warn below `warn`, fail below `fail`. None: that level is never reached."""

    warn: float | None
    fail: float | None
    higher_is_worse: bool = True

    def status(self, figure: float) -> Status:
        def beyond(limit: float | None) -> bool:
            return limit is not None and (figure > limit if self.higher_is_worse else figure < limit)

        return "fail" if beyond(self.fail) else "warn" if beyond(self.warn) else "pass"


@dataclass(frozen=True)
class Example:
    """One offending item: its record id and its text (shortened)."""

    id: str
    text: str


@dataclass(frozen=True)
class Check:
    """One health check's outcome: the figure, the threshold it was compared with, offending items."""

    name: str
    what: str
    """What the check looks for, in one line."""
    status: Status
    figure: float | None
    """The measured share (None: nothing to measure)."""
    detail: str
    """The figure as counts, e.g. "20 of 56 questions"."""
    threshold: Threshold | None = None
    examples: list[Example] = field(default_factory=list)


def shorten(text: str, limit: int = 120) -> str:
    text = " ".join(REF_MARK.sub("", text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def share_check(name: str, what: str, offending: list[Example], total: int, noun: str,
                 threshold: Threshold, *, minimum: int = 1) -> Check:
    """A check whose figure is the share of `total` items that offend."""
    if total < minimum:
        return Check(name, what, "info", None, f"{total} {noun}: too few to judge (needs {minimum})", threshold)
    figure = len(offending) / total
    return Check(name, what, threshold.status(figure), figure, f"{len(offending)} of {total} {noun}", threshold,
                 offending[:EXAMPLES])


__all__ = ["EXAMPLES", "REF_MARK", "Check", "Example", "Status", "Threshold", "share_check", "shorten"]
