"""A judge's agreement figures carry 95 % intervals computed as the references do: Wilson as statsmodels'
proportion_confint, Pearson's Fisher z as scipy's pearsonr(...).confidence_interval(), and the rank
correlations with Fieller, Hartley & Pearson's variances."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from examiner.judging.swap_metrics import classification_metrics
from examiner.core.labels import preference_from_text
from examiner.stats.agreement_intervals import fisher_interval, wilson_interval
from examiner.stats.correlation import sample_level, summary_level, system_level


@pytest.mark.parametrize(("successes", "n"), [(0, 5), (3, 7), (16, 20), (20, 20), (812, 1000)])
def test_wilson_is_statsmodels_proportion_confint(successes: int, n: int) -> None:
    expected = proportion_confint(successes, n, alpha=0.05, method="wilson")
    assert wilson_interval(successes, n) == pytest.approx(expected, abs=1e-12)


def test_wilson_of_nothing_is_undefined() -> None:
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_pearson_interval_is_scipys_fisher_z() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.6 * x + rng.normal(size=40)
    found = sample_level(x, y)
    reference = sps.pearsonr(x, y).confidence_interval(0.95)
    assert (found.pearson_low, found.pearson_high) == pytest.approx((reference.low, reference.high), abs=1e-10)


@pytest.mark.parametrize(("kind", "r", "n", "variance", "lost"), [("spearman", 0.42, 30, 1.06, 3),
                                                                   ("kendall", 0.31, 30, 0.437, 4)])
def test_rank_correlations_use_fiellers_variances(kind: str, r: float, n: int, variance: float, lost: int) -> None:
    z = sps.norm.ppf(0.975) * math.sqrt(variance / (n - lost))
    expected = (math.tanh(math.atanh(r) - z), math.tanh(math.atanh(r) + z))
    assert fisher_interval(r, n, kind) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


def test_too_few_pairs_or_an_undefined_r_give_no_interval() -> None:
    assert all(math.isnan(v) for v in fisher_interval(0.5, 3, "pearson"))
    assert all(math.isnan(v) for v in fisher_interval(0.5, 4, "kendall"))
    assert all(math.isnan(v) for v in fisher_interval(float("nan"), 50, "spearman"))
    assert fisher_interval(1.0, 10, "pearson") == (1.0, 1.0)


def test_sample_and_system_levels_have_intervals_that_hold_the_coefficient_summary_has_none() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=60)
    y = x + rng.normal(size=60)
    systems = [i % 6 for i in range(60)]
    for c in (sample_level(x, y), system_level(x, y, systems)):
        for kind in ("pearson", "spearman", "kendall"):
            low, value, high = getattr(c, f"{kind}_low"), getattr(c, kind), getattr(c, f"{kind}_high")
            assert low < value < high
    assert "pearson_low" not in summary_level(x, y, [i % 5 for i in range(60)]).to_dict()


def test_agreement_accuracy_carries_its_wilson_interval() -> None:
    pred = [preference_from_text(v) for v in "1 1 2 2 1 2 1 1 2 1".split()]
    gold = [preference_from_text(v) for v in "1 2 2 2 1 1 1 1 2 1".split()]
    figures = classification_metrics(pred, gold)
    assert figures["accuracy"] == 0.8
    assert (figures["accuracy_low"], figures["accuracy_high"]) == pytest.approx(
        proportion_confint(8, 10, alpha=0.05, method="wilson"), abs=1e-12)
