"""Grouping codes, cluster-bootstrap totals, the cluster-robust variance and the ANOVA intraclass correlation."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.stats.clusters import bootstrap_totals, grouping, icc_anova, ratio_residuals, robust_variance


def test_grouping_codes_documents_and_clusters_within_them() -> None:
    g = grouping(["d1", "d1", "d2", "d2", "d2"], ["c1", "c2", "c1", "c1", "c2"])
    assert g.n_documents == 2 and g.n_clusters == 4  # c1 of d1 and c1 of d2 are different clusters
    assert g.document.tolist() == [0, 0, 1, 1, 1]
    assert g.cluster.tolist() == [0, 1, 2, 2, 3]
    assert g.cluster_document.tolist() == [0, 0, 1, 1]
    assert g.top_stage == "documents"


def test_one_document_makes_its_clusters_the_top_stage() -> None:
    g = grouping(["only"] * 4, ["a", "a", "b", "c"])
    assert g.top_stage == "clusters" and g.n_documents == 3
    assert grouping(["only"] * 4).n_documents == 1


def test_grouping_refuses_mismatched_lengths() -> None:
    with pytest.raises(ValueError):
        grouping(["d1", "d2"], ["c1"])
    with pytest.raises(ValueError):
        grouping([])


def test_one_stage_resamples_draw_whole_documents() -> None:
    docs = [0, 0, 1, 1, 1, 2]
    columns = np.column_stack([np.arange(6.0), np.ones(6)])
    totals = bootstrap_totals(grouping(docs), columns, 500, seed=3)
    # every resample is a sum of three document totals: its unit count is a sum of three document sizes
    sizes = {a + b + c for a in (2, 3, 1) for b in (2, 3, 1) for c in (2, 3, 1)}
    assert set(totals[:, 1].tolist()) <= sizes
    assert abs(totals[:, 0].mean() - 15.0) < 1.0  # unbiased for the observed total
    again = bootstrap_totals(grouping(docs), columns, 500, seed=3)
    assert np.array_equal(totals, again)


def test_two_stage_resamples_keep_balanced_sizes() -> None:
    docs = np.repeat(np.arange(4), 6)
    clusters = np.tile(np.repeat(np.arange(3), 2), 4)
    values = np.random.default_rng(0).random(24)
    columns = np.column_stack([values, np.ones(24)])
    totals = bootstrap_totals(grouping(docs.tolist(), clusters.tolist()), columns, 300, seed=1, two_stage=True)
    assert np.all(totals[:, 1] == 24)  # 4 documents x 3 clusters x 2 units, whatever is drawn
    assert totals[:, 0].std() > 0


def test_robust_variance_of_a_mean_is_the_textbook_cluster_variance() -> None:
    y = np.array([3.0, 1.0, 2.0, 0.0])
    n = np.array([4.0, 4.0, 4.0, 4.0])
    residuals = ratio_residuals(y, n)
    cluster_means = y / n
    expected = np.var(cluster_means, ddof=1) / 4  # equal sizes: variance of the mean of cluster means
    assert robust_variance(residuals) == pytest.approx(expected)
    assert robust_variance(residuals[:1]) == 0.0


def test_icc_anova_matches_a_hand_computed_balanced_case() -> None:
    values = np.array([1, 1, 1, 0, 0, 0, 1, 0, 1], dtype=float)
    groups = np.repeat([0, 1, 2], 3)
    means = np.array([1.0, 0.0, 2 / 3])
    msb = 3 * np.sum((means - values.mean()) ** 2) / 2
    msw = np.sum((values - means[groups]) ** 2) / 6
    assert icc_anova(values, groups) == pytest.approx((msb - msw) / (msb + 2 * msw))


def test_icc_anova_extremes() -> None:
    assert icc_anova(np.repeat([0.0, 1.0], 5), np.repeat([0, 1], 5)) == pytest.approx(1.0)
    assert icc_anova(np.zeros(10), np.repeat([0, 1], 5)) == 0.0
    assert np.isnan(icc_anova(np.ones(3), np.zeros(3, dtype=int)))
    rng = np.random.default_rng(0)
    assert icc_anova(rng.integers(0, 2, 5000).astype(float), np.repeat(np.arange(500), 10)) < 0.05
