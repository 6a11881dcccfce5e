"""Min-K%++ (examiner/stats/min_k.py) against a hand computation on a three-token vocabulary."""

from __future__ import annotations

import math

import numpy as np
import pytest

from examiner.stats.min_k import TokenStatistics, lowest_share_mean, min_k_plus_plus, token_statistics

LN2 = math.log(2)


def test_each_token_is_standardised_by_its_positions_full_distribution() -> None:
    # position 0 predicts with p = (0.5, 0.25, 0.25): mean log p = -1.5 ln2, sd = 0.5 ln2 (E[log p^2] = 2.5 ln2^2)
    # position 1 with p = (0.8, 0.1, 0.1); the logits carry an offset, which the softmax removes
    # position 2 with p = (0.5, 0.25, 0.25) again
    logits = np.log(np.array([[0.5, 0.25, 0.25], [0.8, 0.1, 0.1], [0.5, 0.25, 0.25], [1 / 3, 1 / 3, 1 / 3]])) + 3.0
    tokens = [2, 0, 1, 1]  # the first token has no context; tokens[i + 1] is read at logits[i]
    stats = token_statistics(logits, tokens)
    mu1 = 0.8 * math.log(0.8) + 0.2 * math.log(0.1)
    sd1 = math.sqrt(0.8 * math.log(0.8) ** 2 + 0.2 * math.log(0.1) ** 2 - mu1**2)
    assert stats.logprob == pytest.approx((-LN2, math.log(0.1), -2 * LN2))
    assert stats.mean == pytest.approx((-1.5 * LN2, mu1, -1.5 * LN2))
    assert stats.sd == pytest.approx((0.5 * LN2, sd1, 0.5 * LN2))
    z = stats.z()
    assert z == pytest.approx([1.0, (math.log(0.1) - mu1) / sd1, -1.0])
    # k = 70 % of three tokens: the lowest two, -1.5 (position 1: (ln 0.1 - mu1) / sd1 = -2.0) and -1.0
    assert (math.log(0.1) - mu1) / sd1 == pytest.approx(-2.0)
    assert min_k_plus_plus(stats, 70) == pytest.approx(-1.5)
    assert min_k_plus_plus(stats, 20) == pytest.approx(-2.0)  # below one token: the lowest one still counts


def test_the_lowest_share_and_the_degenerate_cases() -> None:
    assert lowest_share_mean([3, 1, 2, 5, 4], 40) == pytest.approx(1.5)
    assert lowest_share_mean([3, 1, 2, 5, 4], 100) == pytest.approx(3.0)
    assert math.isnan(lowest_share_mean([], 20))
    assert token_statistics(np.zeros((1, 3)), [1]) == TokenStatistics((), (), ())
    # a certain next token (sd 0) has no standardised value and is left out
    certain = TokenStatistics((0.0, -1.0), (0.0, -0.5), (0.0, 0.5))
    assert certain.z() == pytest.approx([-1.0])
