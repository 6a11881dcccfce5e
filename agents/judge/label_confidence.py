"""How sure a judge was of each label it wrote, read from the log-probabilities of its reply.

Why: a judge cascade (examiner.judging.cascade) escalates the units its cheap judge is unsure of. An
endpoint that returns token log-probabilities says that in one greedy call (Trust or Escalate's predictive
probability), where sampling needs k calls' worth of tokens. The confidence of a unit's label is the
probability the judge gave the label's text: the product of the probabilities of the tokens that spell it
(a token that straddles the opening quote counts, since it already commits to the label). The labels are
found in the text the tokens spell (a token holding part of a multi-byte character spells a replacement
character there, which moves no ASCII label). A label that cannot be found (no logprobs, a reply that is
not the JSON label map asked for) has no confidence: None.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from examiner.llm.types import TokenLogprob

__all__ = ["label_confidences", "token_spans"]


def token_spans(tokens: Sequence[TokenLogprob]) -> tuple[str, list[tuple[int, int, float]]]:
    """The text the tokens spell and each token's (start, end, logprob) in it."""
    spans: list[tuple[int, int, float]] = []
    offset = 0
    for token in tokens:
        spans.append((offset, offset + len(token.token), token.logprob))
        offset += len(token.token)
    return "".join(t.token for t in tokens), spans


def _probability(spans: Iterable[tuple[int, int, float]], start: int, end: int) -> float:
    return math.exp(sum(logprob for a, b, logprob in spans if a < end and b > start))


def label_confidences(tokens: Sequence[TokenLogprob] | None, names: Sequence[str],
                      labels: Sequence[str] = ("correct", "incorrect", "unrelated", "abstained")) -> dict[str, float | None]:
    """Per unit name, the probability the judge gave the label it wrote in its JSON label map; None where
    it cannot be read (no logprobs, a unit without a label)."""
    if not tokens:
        return {name: None for name in names}
    spelled, spans = token_spans(tokens)
    choice = "|".join(re.escape(label) for label in labels)
    out: dict[str, float | None] = {}
    for name in names:
        match = re.search(rf'"{re.escape(name)}"\s*:\s*"({choice})"', spelled)
        out[name] = _probability(spans, *match.span(1)) if match else None
    return out
