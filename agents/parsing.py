"""Reading judge replies: the JudgeLM score line ("8 6" then a reason) and single scores.

Why separate: the roles, the swap metrics and `judge-stats` on imported judgments must read scores
identically, and a reply that does not parse must stay unparseable (never a tie or a zero).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from examiner.core.labels import Preference

_NUMBER = r"(\d+(?:\.\d+)?)"
_PAIR_LINE = re.compile(rf"^\D*?{_NUMBER}\s*(?:,|;|/|\s|and|vs\.?)\s*{_NUMBER}\b")
_SINGLE = re.compile(rf"^\D*?{_NUMBER}")


@dataclass(frozen=True)
class ScoreLine:
    """Parsed first line of a pairwise reply; `error` is set (and scores None) when it did not parse."""

    score_1: float | None
    score_2: float | None
    reason: str
    error: str | None = None


def first_line(text: str) -> tuple[str, str]:
    """(first non-empty line, the rest stripped)."""
    lines = (text or "").strip().splitlines()
    if not lines:
        return "", ""
    return lines[0].strip(), "\n".join(lines[1:]).strip()


def parse_score_line(text: str, low: float = 1, high: float = 10) -> ScoreLine:
    """Two scores on the first line, each within [low, high]; the rest of the reply is the reason."""
    head, rest = first_line(text)
    if not head:
        return ScoreLine(None, None, "", "empty reply")
    match = _PAIR_LINE.match(head)
    if not match:
        return ScoreLine(None, None, rest, f"first line has no two scores: {head[:60]!r}")
    s1, s2 = float(match.group(1)), float(match.group(2))
    for name, value in (("score 1", s1), ("score 2", s2)):
        if not low <= value <= high:
            return ScoreLine(None, None, rest, f"{name} {value:g} outside {low:g}-{high:g}")
    return ScoreLine(s1, s2, rest)


def parse_single_score(text: str, low: float = 1, high: float = 10) -> tuple[float | None, str, str | None]:
    """(score, reason, error) from a reply whose first line holds one score within [low, high]."""
    head, rest = first_line(text)
    if not head:
        return None, "", "empty reply"
    match = _SINGLE.match(head)
    if not match:
        return None, rest, f"first line has no score: {head[:60]!r}"
    value = float(match.group(1))
    if not low <= value <= high:
        return None, rest, f"score {value:g} outside {low:g}-{high:g}"
    return value, rest, None


def verdict_from_scores(score_1: float, score_2: float, tie_threshold: float = 0.0) -> Preference:
    """FIRST when the first answer's grade is higher, SECOND when lower, TIE when |difference| <= threshold."""
    if abs(score_1 - score_2) <= tie_threshold:
        return Preference.TIE
    return Preference.FIRST if score_1 > score_2 else Preference.SECOND
