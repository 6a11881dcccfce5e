"""Deterministic randomness and filler prose for the simulated backend.

Every random choice the simulator makes is a pure function of its inputs (a stable hash, never
Python's salted `hash()`), so a run repeats exactly and a test can recompute what the server did.
"""

from __future__ import annotations

import hashlib
import random
from functools import lru_cache

from examiner.core.tokens import encoding

_SCALE = float(1 << 64)


def stable_int(*parts: object) -> int:
    """A 64-bit integer that depends only on `parts` (same value in every process and run)."""
    key = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big")


def stable_uniform(*parts: object) -> float:
    """A number in [0, 1) that depends only on `parts`."""
    return stable_int(*parts) / _SCALE


def rng_for(*parts: object) -> random.Random:
    """A private random generator seeded from `parts`."""
    return random.Random(stable_int(*parts))


@lru_cache(maxsize=65536)
def count_tokens(text: str) -> int:
    """cl100k tokens of a short text (cached: filler sentences repeat)."""
    return len(encoding().encode(text, disallowed_special=()))


# A small neutral vocabulary: generic words, so filler text does not copy any corpus's wording.
_NOUNS = (
    "account", "approach", "argument", "aspect", "background", "change", "claim", "condition",
    "consequence", "context", "debate", "decision", "detail", "development", "effect", "element",
    "event", "evidence", "example", "factor", "feature", "finding", "group", "idea", "influence",
    "issue", "method", "model", "outcome", "pattern", "period", "perspective", "point", "practice",
    "principle", "process", "purpose", "question", "reason", "record", "relation", "result", "role",
    "source", "stage", "structure", "system", "theme", "tradition", "trend", "view",
)
_ADJECTIVES = (
    "broad", "central", "common", "complex", "current", "early", "general", "important", "initial",
    "key", "large", "later", "main", "major", "modern", "notable", "original", "particular", "possible",
    "practical", "primary", "recent", "related", "relevant", "significant", "similar", "specific",
    "standard", "various", "wider",
)
_VERBS = (
    "affects", "clarifies", "connects", "describes", "explains", "follows", "illustrates", "implies",
    "includes", "indicates", "informs", "involves", "links", "reflects", "reveals", "shapes", "shows",
    "suggests", "supports", "underlines",
)
_LINKERS = (
    "In general", "In this respect", "More broadly", "As a rule", "For the most part", "On balance",
    "In practice", "By comparison", "At the same time", "Taken together",
)
_PREPOSITIONS = ("of", "in", "for", "within", "behind", "across", "about", "around")


def filler_sentence(rng: random.Random) -> str:
    """One plausible, content-free sentence of roughly 12 to 18 words."""
    noun, noun2, noun3 = rng.choice(_NOUNS), rng.choice(_NOUNS), rng.choice(_NOUNS)
    adj, adj2 = rng.choice(_ADJECTIVES), rng.choice(_ADJECTIVES)
    verb = rng.choice(_VERBS)
    prep = rng.choice(_PREPOSITIONS)
    shape = rng.randrange(4)
    if shape == 0:
        return f"{rng.choice(_LINKERS)}, the {adj} {noun} {verb} the {adj2} {noun2} {prep} the {noun3}."
    if shape == 1:
        return f"The {noun} {prep} the {adj} {noun2} {verb} how the {adj2} {noun3} developed over time."
    if shape == 2:
        return (f"This {adj} {noun} {verb} a {adj2} {noun2}, which in turn {rng.choice(_VERBS)} "
                f"the {noun3} as a whole.")
    return f"{rng.choice(_LINKERS)}, one {adj} {noun} {verb} the {noun2} {prep} a {adj2} {noun3}."


def filler_text(rng: random.Random, tokens: int) -> str:
    """Filler prose of about `tokens` cl100k tokens (whole sentences; at least one)."""
    parts: list[str] = []
    budget = max(1, tokens)
    while True:
        sentence = filler_sentence(rng)
        cost = count_tokens(" " + sentence)
        if parts and cost > 2 * budget:
            break
        parts.append(sentence)
        budget -= cost
        if budget <= 0:
            break
    return " ".join(parts)


def filler_words(rng: random.Random, words: int) -> str:
    """A short phrase of `words` generic words (for schema strings)."""
    pool = _ADJECTIVES + _NOUNS
    return " ".join(rng.choice(pool) for _ in range(max(1, words)))


_WH = ("What", "Why", "How", "When", "Where", "Who")
_WH_TEMPLATES = {
    "What": "What {adj} {noun} does the {noun2} {prep} the {adj2} {noun3} {verb_base}, and what {noun4} follows from it for the wider {noun5}",
    "Why": "Why does the {adj} {noun} {prep} the {noun2} {verb_base} the {adj2} {noun3}, and why is this {noun4} considered {adj3} for the {noun5}",
    "How": "How does the {adj} {noun} {verb_base} the {noun2} {prep} the {adj2} {noun3}, and how did this {noun4} change the {adj3} {noun5}",
    "When": "When did the {adj} {noun} {prep} the {noun2} first {verb_base} the {adj2} {noun3}, and when was this {noun4} recorded in the {noun5}",
    "Where": "Where does the {adj} {noun} {prep} the {noun2} {verb_base} the {adj2} {noun3}, and where is the {adj3} {noun4} of this {noun5} found",
    "Who": "Who first set out the {adj} {noun} {prep} the {noun2} that {verb} the {adj2} {noun3}, and who later questioned its {adj3} {noun4}",
}


def wh_question(rng: random.Random) -> str:
    """A plausible wh-question of about 30 words made only from the neutral vocabulary."""
    wh = rng.choice(_WH)
    verb = rng.choice(_VERBS)
    verb_base = verb[:-3] + "y" if verb.endswith("ies") else verb[:-1]
    body = _WH_TEMPLATES[wh].format(
        adj=rng.choice(_ADJECTIVES), adj2=rng.choice(_ADJECTIVES), adj3=rng.choice(_ADJECTIVES),
        noun=rng.choice(_NOUNS), noun2=rng.choice(_NOUNS), noun3=rng.choice(_NOUNS),
        noun4=rng.choice(_NOUNS), noun5=rng.choice(_NOUNS),
        prep=rng.choice(_PREPOSITIONS), verb=verb, verb_base=verb_base,
    )
    tail = f" according to the {rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)}" if rng.random() < 0.7 else ""
    return body + tail + "?"
