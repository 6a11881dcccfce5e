"""Checks on examiner questions: length, answer leaks, and the question's wh-type.

A question leaks when its wording carries too much of a target unit's *distinctive* content: the unit's
content words that are not shared by most of its cluster (shared words name the topic, which a question
may and should mention). Units with fewer than four distinctive words are too short to judge and pass.
"""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_STOP = frozenset(
    """a an the and or but if of at by for with about against between into through during before after above
    below to from up down in out on off over under again further then once here there when where why how all
    any both each few more most other some such no nor not only own same so than too very can will just should
    now is are was were be been being have has had having do does did doing i me my we our you your he him his
    she her it its they them their what which who whom this that these those am also as may might must would
    could shall while because until within without per via its it's""".split()
)
_QTYPES = ("who", "what", "when", "where", "why", "how")
_QTYPE_ALIASES = {"which": "what", "whom": "who", "whose": "who"}


def content_words(text: str) -> list[str]:
    """Lower-cased words minus stop words and one-letter tokens."""
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP and len(w) > 1]


def word_count(text: str) -> int:
    return len(text.split())


def question_type(question: str) -> str:
    """who / what / when / where / why / how from the first wh-word, else `other`."""
    for word in (m.group(0).lower() for m in _WORD.finditer(question)):
        word = _QTYPE_ALIASES.get(word, word)
        if word in _QTYPES:
            return word
    return "other"


def distinctive_words(unit_text: str, cluster_texts: list[str]) -> set[str]:
    """Content words of a unit that fewer than half of the cluster's units share."""
    counts = Counter(word for text in cluster_texts for word in set(content_words(text)))
    limit = max(2, len(cluster_texts) / 2)
    return {w for w in content_words(unit_text) if counts[w] < limit}


def leaking_targets(
    question: str, targets: list[str], texts: dict[str, str], threshold: float
) -> list[str]:
    """Ids of target units whose distinctive words appear in the question above `threshold` share."""
    asked = set(content_words(question))
    cluster_texts = list(texts.values())
    leaks = []
    for uid in targets:
        words = distinctive_words(texts[uid], cluster_texts)
        if len(words) >= 4 and len(words & asked) / len(words) > threshold:
            leaks.append(uid)
    return leaks
