"""G-Eval arithmetic: probability-weighted score from logprobs, or the mean of sampled scores.

score = sum_i p(s_i) * s_i over the allowed scores s_i. With logprobs, p comes from the top_logprobs of
the first generated token that is an allowed score, renormalised over the allowed scores found there
(mass on other tokens says nothing about the score). Without logprobs, n completions are sampled at
temperature 1 and the parsed scores are averaged; completions without a score in range are excluded
and counted, never scored 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from examiner.core.labels import Unscored, unscored_reason
from examiner.llm.types import TokenLogprob

_INT = re.compile(r"\d+")


@dataclass
class GEvalScore:
    """A form-filled score and how it was obtained."""

    score: float | Unscored
    """Expected score, or Unscored when no completion gave a score in range."""
    path: str
    """`logprobs` or `samples`."""
    probabilities: dict[int, float] = field(default_factory=dict)
    """p(s) per allowed score (logprob path: renormalised token probabilities; samples: frequencies)."""
    n_samples: int = 0
    """Completions asked for on the sampling path (1 on the logprob path)."""
    n_used: int = 0
    """Completions that gave a score in range."""
    n_unparseable: int = 0
    """Completions without a score in range (excluded)."""
    fallback_reason: str = ""
    """Why the sampling path was taken when logprobs were asked for."""

    def to_dict(self) -> dict[str, object]:
        """The judgments-JSONL columns: `score` (null with `unscored` saying why when there is none), ..."""
        return {
            "score": None if isinstance(self.score, Unscored) else self.score, "unscored": unscored_reason(self.score),
            "path": self.path,
            "probabilities": {str(k): round(v, 6) for k, v in self.probabilities.items()},
            "n_samples": self.n_samples, "n_used": self.n_used, "n_unparseable": self.n_unparseable,
            "fallback_reason": self.fallback_reason,
        }


def allowed_scores(scale: int, low: int = 1) -> list[int]:
    """The integer scores low..scale."""
    return list(range(low, scale + 1))


def _as_score(token: str, allowed: Sequence[int]) -> int | None:
    text = token.strip()
    if not text.isdigit():
        return None
    value = int(text)
    return value if value in allowed else None


def expected_from_logprobs(tokens: Sequence[TokenLogprob] | None, allowed: Sequence[int]) -> GEvalScore | None:
    """Expected score from the first score token's alternatives, or None when no token is a score."""
    for tok in tokens or ():
        if _as_score(tok.token, allowed) is None:
            continue
        mass: dict[int, float] = {}
        candidates = dict(tok.top) or {tok.token: tok.logprob}
        candidates.setdefault(tok.token, tok.logprob)
        for alt, logprob in candidates.items():
            value = _as_score(alt, allowed)
            if value is not None:
                mass[value] = mass.get(value, 0.0) + math.exp(logprob)
        total = sum(mass.values())
        probs = {s: p / total for s, p in sorted(mass.items())}
        expected = sum(s * p for s, p in probs.items())
        return GEvalScore(expected, "logprobs", probs, n_samples=1, n_used=1)
    return None


def score_in_text(text: str, allowed: Sequence[int]) -> int | None:
    """The first integer in a reply, if it is an allowed score (a reply like "Coherence: 4" gives 4)."""
    match = _INT.search(text or "")
    if not match:
        return None
    value = int(match.group(0))
    return value if value in allowed else None


def mean_of_samples(texts: Sequence[str], allowed: Sequence[int], fallback_reason: str = "") -> GEvalScore:
    """Mean of the scores parsed from sampled completions; unparseable ones are excluded and counted."""
    values = [score_in_text(t, allowed) for t in texts]
    used = [v for v in values if v is not None]
    probs = {s: used.count(s) / len(used) for s in sorted(set(used))} if used else {}
    return GEvalScore(
        sum(used) / len(used) if used else Unscored("no sample gave a score in range"), "samples", probs,
        n_samples=len(texts), n_used=len(used), n_unparseable=len(texts) - len(used),
        fallback_reason=fallback_reason,
    )
