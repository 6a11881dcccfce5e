"""How likely each pairwise verdict was, read from the log-probabilities of a grade line ("s1 s2").

Why: a pairwise judge cascade (examiner.judging.pairwise_cascade) escalates the pairs its cheap judge is
unsure of; one greedy call with logprobs says that where sampling needs several. The verdict is a function
of two scores, so its probability needs both: each score's distribution is read from the alternatives the
endpoint lists at its token (`top_logprobs`, renormalised over the tokens that are scores 1..10), and
P(verdict) = sum over (a, b) of p1(a) p2(b) [verdict(a, b) = verdict]. Treating the two as independent
is an approximation (the second score is written knowing the first). Where the endpoint lists no
alternatives at a score's token, the chosen score keeps its own probability (not renormalised), so the
result is then a lower bound for the chosen verdict.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from examiner.agents.judge.label_confidence import token_spans
from examiner.agents.parsing import verdict_from_scores
from examiner.core.labels import Preference
from examiner.llm.types import TokenLogprob

__all__ = ["verdict_probabilities"]

GRADES = re.compile(r"^\s*(\d{1,2})\s*[ ,;/]\s*(\d{1,2})\b")
SCORES = range(1, 11)


def _score_distribution(token: TokenLogprob, chosen: int) -> dict[int, float]:
    """The score token's alternatives that are scores, renormalised (given that a score is written); the
    chosen score with its own probability when the endpoint listed no alternatives."""
    if not token.top:
        return {chosen: math.exp(token.logprob)}
    candidates = {**token.top, token.token: token.logprob}
    mass: dict[int, float] = {}
    for text, logprob in candidates.items():
        value = text.strip()
        if value.isdigit() and int(value) in SCORES:
            mass[int(value)] = mass.get(int(value), 0.0) + math.exp(logprob)
    total = sum(mass.values())
    return {score: p / total for score, p in mass.items()}


def _score_token(tokens: Sequence[TokenLogprob], spans: list[tuple[int, int, float]], start: int,
                 end: int, value: int) -> TokenLogprob | None:
    """The one token that spells the score at [start, end) (None when the score is split over tokens)."""
    covering = [i for i, (a, b, _) in enumerate(spans) if a < end and b > start]
    if len(covering) != 1 or tokens[covering[0]].token.strip() != str(value):
        return None
    return tokens[covering[0]]


def verdict_probabilities(tokens: Sequence[TokenLogprob] | None,
                          tie_threshold: float = 0.0) -> dict[Preference, float] | None:
    """P(first), P(second), P(tie) in the order shown, from a grade line's logprobs; None where the reply
    has no logprobs or its first line is not two scores each spelled by one token."""
    if not tokens:
        return None
    spelled, spans = token_spans(tokens)
    match = GRADES.match(spelled)
    if match is None:
        return None
    found = [_score_token(tokens, spans, *match.span(i), int(match.group(i))) for i in (1, 2)]
    if found[0] is None or found[1] is None:
        return None
    first = _score_distribution(found[0], int(match.group(1)))
    second = _score_distribution(found[1], int(match.group(2)))
    out = {verdict: 0.0 for verdict in Preference}
    for a, pa in first.items():
        for b, pb in second.items():
            out[verdict_from_scores(a, b, tie_threshold)] += pa * pb
    return out
