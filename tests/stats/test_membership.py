"""Document-level figures of the memorisation probe (examiner.stats.membership): the AUROC against
scikit-learn's, Newcombe's interval (its null variance, no collapse at complete separation, its coverage)
and the mean over documents."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

from examiner.stats.membership import _newcombe_variance, auroc, auroc_interval, document_mean


def test_auroc_is_the_mann_whitney_probability_with_ties_as_halves() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 4, 12).astype(float), rng.integers(0, 4, 9).astype(float)
    expected = roc_auc_score([1] * len(a) + [0] * len(b), np.concatenate([a, b]))
    assert math.isclose(auroc(a, b), expected)
    assert math.isnan(auroc([], b))


def test_newcombe_variance_at_one_half_is_the_null_variance_of_equal_samples() -> None:
    for n in (3, 8, 40):
        assert math.isclose(_newcombe_variance(0.5, n, n), (2 * n + 1) / (12 * n * n))


def test_complete_separation_still_gets_an_interval_wider_than_a_point() -> None:
    result = auroc_interval([1, 2, 3, 4, 5], [-1, -2, -3, -4, -5])
    assert result.auroc == 1.0 and result.high == 1.0 and 0.5 < result.low < 0.8
    flipped = auroc_interval([-1, -2, -3], [1, 2, 3])
    assert flipped.auroc == 0.0 and flipped.low == 0.0 and 0.3 < flipped.high < 0.6


def test_the_interval_covers_the_true_auroc_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(7)
    shift, reps = 0.8, 1500
    true = norm.cdf(shift / math.sqrt(2))
    hits = sum(r.low <= true <= r.high for r in (auroc_interval(rng.normal(shift, 1, 10), rng.normal(0, 1, 8))
                                                 for _ in range(reps)))
    assert 0.93 <= hits / reps <= 0.985


def test_document_mean_is_a_t_interval_over_documents() -> None:
    m = document_mean([0.1, 0.2, 0.3, float("nan")])
    assert m.documents == 3 and math.isclose(m.mean, 0.2)
    half = 4.302652729749464 * 0.1 / math.sqrt(3)  # t(0.975, 2) x sd / sqrt(n)
    assert math.isclose(m.low, 0.2 - half) and math.isclose(m.high, 0.2 + half)
    assert math.isnan(document_mean([0.4]).low) and document_mean([]).documents == 0
