"""Correlations at sample / summary / system level and the cluster bootstrap, on hand-checkable data."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from examiner.stats.correlation import (
    bootstrap_ci,
    kendall,
    pearson,
    sample_level,
    spearman,
    summary_level,
    system_level,
    weighted_mean,
    weighted_ratio,
)


def test_perfectly_monotone_is_one():
    x = [1, 2, 3, 4, 5]
    y = [1, 4, 9, 16, 25]  # monotone but not linear
    c = sample_level(x, y)
    assert c.spearman == pytest.approx(1.0)
    assert c.kendall == pytest.approx(1.0)
    assert 0.9 < c.pearson < 1.0
    assert pearson(x, [2 * v + 1 for v in x]) == pytest.approx(1.0)
    assert spearman(x, y[::-1]) == pytest.approx(-1.0)


def test_kendall_tau_b_with_ties_by_hand():
    # x = 1 2 2 3, y = 1 3 2 3. Six pairs:
    # (1,2) C, (1,3) C, (1,4) C, (3,4) C; (2,3) tied in x only; (2,4) tied in y only.
    # C=4, D=0, n0=6, ties_x=1, ties_y=1 -> tau_b = 4 / sqrt(5 * 5) = 0.8
    assert kendall([1, 2, 2, 3], [1, 3, 2, 3]) == pytest.approx(0.8)


def test_undefined_correlations_are_nan():
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(kendall([1], [2]))


def test_summary_level_skips_constant_groups():
    metric = [1, 2, 3,   1, 2, 3,   5, 5, 5,   1, 2, 3,   7]
    human = [1, 2, 3,   4, 4, 4,   1, 2, 3,   1, 3, 2,   1]
    groups = ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["d"] * 3 + ["e"]
    # a: perfect (rho 1, tau 1). b: human constant -> skip. c: metric constant -> skip.
    # d: ranks 1 2 3 vs 1 3 2: rho = 1 - 6*2/(3*8) = 0.5; tau = (2 - 1)/3. e: one item -> skip.
    r = summary_level(metric, human, groups)
    assert (r.n_groups_used, r.n_groups_skipped) == (2, 3)
    assert r.spearman == pytest.approx((1 + 0.5) / 2)
    assert r.kendall == pytest.approx((1 + 1 / 3) / 2)
    json.dumps(r.to_dict(), allow_nan=False)


def test_summary_level_all_skipped_is_nan():
    r = summary_level([1, 1, 2, 2], [1, 2, 3, 4], ["a", "a", "b", "b"])
    assert r.n_groups_used == 0 and r.n_groups_skipped == 2 and math.isnan(r.spearman)


def test_system_level_averages_first():
    metric = [0.1, 0.3, 0.5, 0.7, 0.9, 1.1]
    human = [5, 1, 2, 4, 3, 5]  # per-item order disagrees...
    systems = ["s1", "s1", "s2", "s2", "s3", "s3"]
    # ...but system means: metric .2 .6 1.0, human 3 3 4 -> rho between (1,2,3) and (1.5,1.5,3)
    r = system_level(metric, human, systems)
    assert r.n == 3
    assert r.spearman == pytest.approx(spearman([1, 2, 3], [1.5, 1.5, 3]))
    assert r.kendall == pytest.approx(kendall([1, 2, 3], [3, 3, 4]))


def test_length_mismatch_raises():
    with pytest.raises(ValueError):
        sample_level([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        summary_level([1, 2], [1, 2], ["a"])


def _clusters(seed: int = 3, n_clusters: int = 60) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # cluster effect + item noise around a true mean of 0.5
    return [0.5 + rng.normal(0, 0.1) + rng.normal(0, 0.2, size=rng.integers(1, 8)) for _ in range(n_clusters)]


def test_bootstrap_ci_contains_true_mean():
    ci = bootstrap_ci(_clusters(), np.mean, n=1000, seed=1)
    assert ci.low < 0.5 < ci.high
    assert ci.low < ci.estimate < ci.high
    assert ci.n_valid == 1000 and ci.n_clusters == 60
    json.dumps(ci.to_dict(), allow_nan=False)


def test_bootstrap_weighted_matches_generic_and_is_seeded():
    clusters = _clusters(seed=5)
    a = bootstrap_ci(clusters, np.mean, n=300, seed=7)
    b = bootstrap_ci(clusters, weighted_mean, n=300, seed=7, weighted=True)
    assert a.estimate == pytest.approx(b.estimate)
    assert a.low == pytest.approx(b.low) and a.high == pytest.approx(b.high)
    assert bootstrap_ci(clusters, np.mean, n=300, seed=7) == a  # same seed, same interval


def test_bootstrap_ratio_for_exam_accuracy():
    # per cluster rows of (correct, covered); 3/4 of covered verdicts are correct
    clusters = {f"q{i}": [[1, 1], [1, 1], [1, 1], [0, 1], [0, 0]] for i in range(20)}
    ci = bootstrap_ci(clusters, weighted_ratio, n=200, seed=0, weighted=True)
    assert ci.estimate == pytest.approx(0.75)
    assert ci.low == pytest.approx(0.75) and ci.high == pytest.approx(0.75)  # identical clusters


def test_bootstrap_wider_with_fewer_clusters():
    few = bootstrap_ci(_clusters(n_clusters=10), np.mean, n=500, seed=0)
    many = bootstrap_ci(_clusters(n_clusters=200), np.mean, n=500, seed=0)
    assert (few.high - few.low) > (many.high - many.low)
