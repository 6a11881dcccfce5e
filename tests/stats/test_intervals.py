"""Accuracy intervals at every sample size: never zero-width for data that vary."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from examiner.stats.intervals import (
    SMALL_SAMPLE_GROUPS,
    accuracy_interval,
    clopper_pearson,
    exact_paired_bounds,
    is_small_sample,
    t_interval,
    wilson_design_effect,
)


def test_the_issue_example_is_no_longer_zero_width() -> None:
    # 8 units in 2 clusters, both at 0.75: the percentile bootstrap printed 0.750 [0.750, 0.750]
    result = accuracy_interval([1, 1, 1, 0, 1, 1, 1, 0], [1, 1, 1, 1, 2, 2, 2, 2])
    assert result.estimate == 0.75 and result.small_sample
    assert result.low < 0.75 < result.high


def test_wilson_with_no_design_effect_and_many_groups_is_wilson() -> None:
    low, high = wilson_design_effect(30, 100, 1.0, n_groups=10**6)
    expected = proportion_confint(30, 100, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx(expected, abs=1e-5)
    wider = wilson_design_effect(30, 100, 3.0, n_groups=10)
    assert wider[0] < low and wider[1] > high


def test_all_correct_still_has_a_lower_bound_below_one() -> None:
    result = accuracy_interval([1] * 12, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    assert result.high == 1.0 and result.low < 1.0


def test_many_documents_use_the_same_wilson_interval_as_few() -> None:
    """No switch at SMALL_SAMPLE_GROUPS: 40 documents get the Wilson interval with design effect and t on
    39 df, only flagged as not small."""
    rng = np.random.default_rng(0)
    docs = np.repeat(np.arange(SMALL_SAMPLE_GROUPS + 10), 5)
    outcomes = rng.integers(0, 2, docs.size).tolist()
    outcomes[3] = None
    result = accuracy_interval(outcomes, docs.tolist())
    assert not result.small_sample and result.method.startswith("Wilson with design effect")
    assert result.n_units == docs.size - 1
    assert result.low < result.estimate < result.high
    y, n = sum(o for o in outcomes if o is not None), docs.size - 1
    p = y / n
    deff = max(result.standard_error**2 / (p * (1 - p) / n), 1.0)
    assert (result.low, result.high) == pytest.approx(wilson_design_effect(y, n, deff, SMALL_SAMPLE_GROUPS + 10))


def test_clopper_pearson_is_statsmodels_beta_interval() -> None:
    for count, n in ((0, 12), (3, 12), (12, 12), (41, 352)):
        expected = proportion_confint(count, n, alpha=0.05, method="beta")
        assert clopper_pearson(count, n) == pytest.approx(expected, abs=1e-10)


def test_exact_paired_bounds_without_discordance_are_the_rule_of_three_bounds() -> None:
    low, high = exact_paired_bounds(0, 0, 352, level=0.90)
    assert low == pytest.approx(-(1 - 0.05 ** (1 / 352))) and high == pytest.approx(1 - 0.05 ** (1 / 352))
    low, high = exact_paired_bounds(5, 20, 100)
    assert low < 0.15 < high and exact_paired_bounds(20, 5, 100) == pytest.approx((-high, -low))


def test_random_small_data_never_give_a_zero_width_interval() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        size = int(rng.integers(2, 40))
        docs = rng.integers(0, int(rng.integers(1, 8)), size).tolist()
        outcomes = rng.integers(0, 2, size).tolist()
        result = accuracy_interval(outcomes, docs)
        assert result.high > result.low


def test_helpers() -> None:
    assert is_small_sample(SMALL_SAMPLE_GROUPS - 1) and not is_small_sample(SMALL_SAMPLE_GROUPS)
    assert t_interval(0.1, 0.05, df=4) == pytest.approx((0.1 - 2.776445 * 0.05, 0.1 + 2.776445 * 0.05), abs=1e-6)
