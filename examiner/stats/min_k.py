"""Min-K%++ (Zhang et al., 2024, "Min-K%++: Improved baseline for detecting pre-training data"): how much
more likely a text's least likely tokens are than the model expected at their positions.

For each token x_t, z_t = (log p(x_t | x_<t) - mu_t) / sigma_t, where mu_t and sigma_t are the mean and
standard deviation of log p(z | x_<t) with z drawn from p(. | x_<t) itself, over the whole vocabulary. A
text's score is the mean of its lowest k % of z_t. Why standardise: a token is a local maximum of the
likelihood in a text the model was trained on, so it sits high within its own position's distribution even
where that distribution is flat; a raw log-probability (Min-K%) mixes that with how hard the position is.
The mean and variance need every token's probability at every position, which only the model's full
logits give (an API's top-k log-probabilities do not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_K_PERCENT = 20.0
"""The paper's default share of lowest-scoring tokens averaged."""


@dataclass(frozen=True)
class TokenStatistics:
    """Per scored token: its log-probability and the mean and standard deviation of the log-probability
    under the model's own distribution at its position."""

    logprob: tuple[float, ...]
    mean: tuple[float, ...]
    sd: tuple[float, ...]

    def z(self) -> np.ndarray:
        """Each token's standardised log-probability (positions with sd 0, a certain next token: left out)."""
        lp, mu, sd = (np.asarray(v, dtype=float) for v in (self.logprob, self.mean, self.sd))
        keep = sd > 0
        z: np.ndarray = (lp[keep] - mu[keep]) / sd[keep]
        return z


def token_statistics(logits: np.ndarray, tokens: Sequence[int]) -> TokenStatistics:
    """The statistics of tokens[1:] from the logits of every position (`logits[i]` predicts `tokens[i + 1]`;
    the first token has no context and is not scored)."""
    from scipy.special import log_softmax

    if len(tokens) < 2:
        return TokenStatistics((), (), ())
    rows = np.asarray(logits[: len(tokens) - 1], dtype=np.float64)
    logp = log_softmax(rows, axis=-1)
    p = np.exp(logp)
    mu = (p * logp).sum(axis=-1)
    var = np.clip((p * logp**2).sum(axis=-1) - mu**2, 0.0, None)
    chosen = logp[np.arange(len(rows)), np.asarray(tokens[1:])]
    return TokenStatistics(tuple(map(float, chosen)), tuple(map(float, mu)), tuple(map(float, np.sqrt(var))))


def lowest_share_mean(values: Sequence[float] | np.ndarray, k_percent: float = DEFAULT_K_PERCENT) -> float:
    """Mean of the lowest `k_percent` % of `values` (at least one value; NaN when there are none)."""
    x = np.sort(np.asarray(values, dtype=float))
    if x.size == 0:
        return math.nan
    count = max(1, int(x.size * k_percent / 100.0))
    return float(x[:count].mean())


def min_k_plus_plus(stats: TokenStatistics, k_percent: float = DEFAULT_K_PERCENT) -> float:
    """A text's Min-K%++ score: the mean of its lowest `k_percent` % standardised token log-probabilities
    (higher: more like a text the model was trained on)."""
    return lowest_share_mean(stats.z(), k_percent)


__all__ = ["DEFAULT_K_PERCENT", "TokenStatistics", "lowest_share_mean", "min_k_plus_plus", "token_statistics"]
