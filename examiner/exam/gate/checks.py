"""The gate's checks that need no model call: the question's language, unit labels named in it, whether a
quote the checker gave is really from the unit it names, and near-copies of earlier questions.

Why here: the language and label checks were health checks of the whole exam after the fact
(examiner.exam.health_questions, issue 29); a question that fails them is now stopped before a target is
asked, and the health checks read the same per-question rules from this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from examiner.corpus.language import UNDETERMINED, language_name, language_probabilities

REF_MARK = re.compile(r"\s?\[ref:[^\]]*\]")
"""A simulated question's hidden `[ref:ids]` marker (docs/SIMULATOR.md): no part of what a check reads."""
MIN_LETTERS = 20
"""Letters a question needs for its language to be detected (a shorter one is not checked)."""
MIN_PROBABILITY = 0.2
"""A question is in another language only when langdetect gives every allowed language (the exam's, its
units') less than this probability: its best guess alone misreads short texts (a Chinese question read as
Korean with 0.57 against 0.43)."""
LABELS = re.compile(r"\[?\bU\d{1,3}\b\]?|\bku-[0-9a-f]{6,}\b|\b(?:knowledge[ -])?units? \d{1,3}\b"
                    r"|\bknowledge units?\b", re.IGNORECASE)
"""A unit label of the prompt (U1, [U2]), a knowledge-unit id (ku-...) or "unit 3" / "knowledge unit"."""


@dataclass(frozen=True)
class CheckResult:
    """One check of one question: its name, whether the question passed, and why not."""

    name: str
    passed: bool
    reason: str = ""


def bare(text: str) -> str:
    """The question as a reader sees it (without a simulated `[ref:...]` marker)."""
    return REF_MARK.sub("", text).strip()


def letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def other_language(text: str, allowed: Iterable[str]) -> str | None:
    """The language `text` is written in when it is none of `allowed` (codes; `und` and empty ignored),
    None when it is in one of them or too short to tell (MIN_LETTERS, MIN_PROBABILITY)."""
    allowed = {code for code in allowed if code and code != UNDETERMINED}
    text = bare(text)
    if not allowed or letters(text) < MIN_LETTERS:
        return None
    odds = language_probabilities(text)
    if not odds or any(odds.get(code, 0.0) >= MIN_PROBABILITY for code in allowed):
        return None
    return max(odds, key=odds.__getitem__)


def language_check(text: str, allowed: Iterable[str]) -> CheckResult:
    """Passed unless the question is written in a language that is neither the exam's nor its units'."""
    allowed = list(allowed)
    found = other_language(text, allowed)
    if found is None:
        return CheckResult("language", True)
    wanted = " or ".join(language_name(code) for code in allowed if code and code != UNDETERMINED)
    return CheckResult("language", False, f"written in {language_name(found)}, not {wanted}")


def named_labels(text: str, own_texts: Iterable[str]) -> list[str]:
    """Unit labels or ids the question names (LABELS), except those its own units contain (a corpus about
    the band U2)."""
    own = " ".join(own_texts).casefold()
    named = [m.group(0).strip("[]") for m in LABELS.finditer(bare(text))]
    return list(dict.fromkeys(name for name in named if name.casefold() not in own))


def label_check(text: str, own_texts: Iterable[str]) -> CheckResult:
    """Passed unless the question names the prompt's unit labels or ids, which the candidate never saw."""
    named = named_labels(text, own_texts)
    return CheckResult("labels", not named, f"names {', '.join(named)}" if named else "")


def quote_match(quote: str, unit_text: str) -> float:
    """How well `quote` is found in `unit_text` (0-1): the share of the quote's characters covered by the
    matching blocks of the best-aligned window of the unit (case and spacing ignored). A quote copied from
    the unit scores about 1; one taken from another unit or made up scores low."""
    q = " ".join(quote.casefold().split())
    u = " ".join(unit_text.casefold().split())
    if not q or not u:
        return 0.0
    if q in u:
        return 1.0
    matcher = SequenceMatcher(None, u, q, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks() if block.size >= 4)
    return matched / len(q)


def citation_check(claimed: Sequence[str], support: dict[str, tuple[bool, str]], texts: dict[str, str],
                   min_match: float) -> CheckResult:
    """Every unit the question claims to target must be judged supported by the checker, with a quote that
    matches that unit's text at `min_match` or better (quote_match)."""
    problems = []
    for uid in claimed:
        supported, quote = support.get(uid, (False, ""))
        if not supported:
            problems.append(f"{uid} does not support it" if uid in support else f"{uid} was not checked")
        elif quote_match(quote, texts.get(uid, "")) < min_match:
            problems.append(f"the quote given for {uid} is not from it")
    return CheckResult("citation", not problems, "; ".join(problems))


def nearest(vector: np.ndarray, earlier: np.ndarray) -> tuple[int, float]:
    """Index and cosine of the earlier question closest to `vector` (unit-norm rows); (-1, 0.0) for none."""
    if earlier.size == 0:
        return -1, 0.0
    cosines = earlier @ vector
    best = int(np.argmax(cosines))
    return best, float(cosines[best])


__all__ = ["LABELS", "MIN_LETTERS", "MIN_PROBABILITY", "REF_MARK", "CheckResult", "bare", "citation_check",
           "label_check", "language_check", "letters", "named_labels", "nearest", "other_language", "quote_match"]
