"""One label vocabulary for every method, and one way to say "no verdict".

Inside examiner a verdict on a knowledge unit is a `Verdict`, a pairwise preference is a `Preference`,
and a judgment that could not be had is an `Unscored` with its reason: never a number, a tie or a
default label. Other spellings (gold labels 0/1/2, "Answer1", "Assistant2", "a wins", ...) exist only
where text enters or leaves the program (datasets, model replies, prompts, report columns), and are
converted there by the functions below.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Union


class Verdict(str, Enum):
    """A judge's label for one knowledge unit given one answer (docs/METHODS.md section 1, step 5)."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    UNRELATED = "unrelated"
    ABSTAINED = "abstained"
    """The answer declines, hedges without a claim about the unit, or asks for more context: the target
    was asked and chose not to say (SimpleQA's NOT_ATTEMPTED). Decided by the judge, never by a phrase list."""

    def __str__(self) -> str:
        return self.value


COVERING = frozenset({Verdict.CORRECT, Verdict.INCORRECT, Verdict.ABSTAINED})
"""Labels that cover a unit (it was asked about and the answer took a stand: right, wrong, or declined);
`unrelated` (and unscored) leave it in the pool."""

ATTEMPTED = frozenset({Verdict.CORRECT, Verdict.INCORRECT})
"""Covering labels where the answer made a claim about the unit: the denominator of the hallucination rate
(incorrect among attempted) and of correct-given-attempted."""


class Preference(str, Enum):
    """Which of two things shown side by side is better: the first, the second, or neither."""

    FIRST = "first"
    SECOND = "second"
    TIE = "tie"

    def swapped(self) -> "Preference":
        """The same preference with the two sides shown in the other order."""
        return {Preference.FIRST: Preference.SECOND, Preference.SECOND: Preference.FIRST}.get(self, self)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Unscored:
    """A judgment that has no value: the reply did not parse, the call failed, the budget ran out.

    It is counted and shown, never turned into a score, a tie or a default label."""

    reason: str
    raw: str = ""
    """What the model said, when it said anything (kept for the report)."""

    def __bool__(self) -> bool:  # an unscored result is never truthy, so `if result:` cannot pass it
        return False

    @property
    def call_failed(self) -> bool:
        """The model call itself failed (after the gateway's retries), as opposed to a reply that could
        not be read; reports count the two apart. Read from the reason, so it survives a round trip to disk."""
        return self.reason.startswith(CALL_FAILED)


CALL_FAILED = "failed: "
"""How the reason of an Unscored begins when the model call failed."""


def call_failed(error: object) -> Unscored:
    """No judgment because the model call failed: `failed: <error>`."""
    return Unscored(f"{CALL_FAILED}{error}")


Judged = Union[Verdict, Unscored]
"""A unit's label or the reason there is none."""

Preferred = Union[Preference, Unscored]
"""A pairwise preference or the reason there is none."""


def is_scored(value: object) -> bool:
    """True for a real label or number, False for Unscored and None."""
    return value is not None and not isinstance(value, Unscored)


def unscored_reason(value: object) -> str | None:
    """The `unscored` column of a record on disk (its label column then null): why there is no label,
    None when there is one."""
    return value.reason if isinstance(value, Unscored) else None


# ---------------------------------------------------------------------------------------------- edges
_VERDICT_SPELLINGS = {v.value: v for v in Verdict}

_PREFERENCE_SPELLINGS: dict[str, Preference] = {}
for _p, _names in {
    Preference.FIRST: ("first", "1", "answer1", "answer 1", "output_1", "output 1", "assistant1", "assistant 1",
                       "a", "a wins", "a_wins", "response 1", "1 wins"),
    Preference.SECOND: ("second", "2", "answer2", "answer 2", "output_2", "output 2", "assistant2", "assistant 2",
                        "b", "b wins", "b_wins", "response 2", "2 wins"),
    Preference.TIE: ("tie", "0", "draw", "equal", "equally good", "both", "neither"),
}.items():
    for _name in _names:
        _PREFERENCE_SPELLINGS[_name] = _p


def verdict_from_text(value: object) -> Verdict:
    """A verdict from an input spelling (`correct`, ` Incorrect `); ValueError for anything else."""
    key = str(value).strip().lower()
    if key in _VERDICT_SPELLINGS:
        return _VERDICT_SPELLINGS[key]
    raise ValueError(f"not a verdict: {value!r} (expected correct, incorrect, unrelated or abstained)")


def preference_from_text(value: object) -> Preference:
    """A preference from any spelling the inputs use: gold 1 / 2 / 0, "Answer1", "Assistant2",
    "equally good", "a wins", "tie", ... ValueError for anything else (never a silent tie)."""
    if isinstance(value, Preference):
        return value
    if isinstance(value, bool):
        raise ValueError(f"not a preference: {value!r}")
    if isinstance(value, (int, float)) and float(value).is_integer():
        value = int(value)
    key = " ".join(str(value).strip().lower().split())
    if key in _PREFERENCE_SPELLINGS:
        return _PREFERENCE_SPELLINGS[key]
    raise ValueError(f"not a preference: {value!r} (expected 1, 2 or tie / 0)")


def preference_to_number(value: Preference) -> int:
    """The gold-label spelling of a preference: 1 first, 2 second, 0 tie (JudgeLM's tables)."""
    return {Preference.FIRST: 1, Preference.SECOND: 2, Preference.TIE: 0}[value]


def preference_to_answer(value: Preference) -> str:
    """The spelling prompts ask pairwise evaluators for: Answer1 / Answer2 / tie."""
    return {Preference.FIRST: "Answer1", Preference.SECOND: "Answer2", Preference.TIE: "tie"}[value]


def preference_to_assistant(value: Preference) -> str:
    """The spelling prompts ask meta-evaluators for: Assistant1 / Assistant2 / equally good."""
    return {Preference.FIRST: "Assistant1", Preference.SECOND: "Assistant2", Preference.TIE: "equally good"}[value]


__all__ = [
    "ATTEMPTED",
    "CALL_FAILED",
    "COVERING",
    "Judged",
    "Preference",
    "Preferred",
    "Unscored",
    "Verdict",
    "call_failed",
    "is_scored",
    "unscored_reason",
    "preference_from_text",
    "preference_to_answer",
    "preference_to_assistant",
    "preference_to_number",
    "verdict_from_text",
]
