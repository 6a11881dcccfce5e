"""Paired comparison of two targets: McNemar against statsmodels, the cluster test's special cases, the
interval, subgroups with Benjamini-Hochberg, and the non-inferiority decision."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from examiner.stats.paired import compare_paired, margin_text, mcnemar_exact, non_inferiority, paired_subgroups


def table_units(both: int, a_only: int, b_only: int, neither: int) -> tuple[list[int], list[int]]:
    a = [1] * both + [1] * a_only + [0] * b_only + [0] * neither
    b = [1] * both + [0] * a_only + [1] * b_only + [0] * neither
    return a, b


def clustered_pair(seed: int, documents: int = 40, units: int = 8, shift: float = 0.0) -> tuple[list[int], list[int], list[int]]:
    rng = np.random.default_rng(seed)
    p_a = rng.beta(1.5, 1.0, documents)
    p_b = np.clip(p_a + shift + rng.normal(0, 0.15, documents), 0, 1)
    docs = np.repeat(np.arange(documents), units)
    a = (rng.random(docs.size) < p_a[docs]).astype(int)
    b = (rng.random(docs.size) < p_b[docs]).astype(int)
    return a.tolist(), b.tolist(), docs.tolist()


def test_mcnemar_exact_equals_statsmodels_on_a_textbook_table() -> None:
    # Agresti (2002), table 10.1: approval of the prime minister in two surveys
    a, b = table_units(794, 150, 86, 570)
    result = mcnemar_exact(a, b)
    assert (result.a_only, result.b_only, result.both_covered) == (150, 86, 1600)
    expected = mcnemar([[794, 150], [86, 570]], exact=True).pvalue
    assert result.p_value == pytest.approx(expected)
    assert result.p_value == pytest.approx(sps.binomtest(86, 236, 0.5).pvalue)


def test_mcnemar_leaves_out_units_either_target_did_not_cover() -> None:
    result = mcnemar_exact([1, 0, None, 1], [0, 1, 1, None])
    assert (result.a_only, result.b_only, result.both_covered) == (1, 1, 2)
    assert mcnemar_exact([1, 1], [1, 1]).p_value == 1.0


def test_with_every_unit_its_own_document_the_test_is_mcnemars_asymptotic_one_or_the_exact_floor() -> None:
    """Each unit its own document: the cluster-robust variance is McNemar's asymptotic one; the standard
    error is the larger of it and the one the exact (Clopper-Pearson MOVER) interval implies, here the
    exact one (150 units, 42 discordant), so the test is never less cautious than either."""
    a, b = table_units(60, 30, 12, 48)
    result = compare_paired(a, b, list(range(len(a))))
    n, diff = len(a), (12 - 30) / len(a)
    variance = ((30 + 12) / n - diff**2) / n * n / (n - 1)
    assert result.accuracy_difference.estimate == pytest.approx(diff)
    assert result.design_effect == pytest.approx(1.0)
    t = float(sps.t.ppf(0.975, n - 1))
    low_a, high_a = (float(sps.beta.ppf(0.025, 30, n - 29)), float(sps.beta.ppf(0.975, 31, n - 30)))
    low_b, high_b = (float(sps.beta.ppf(0.025, 12, n - 11)), float(sps.beta.ppf(0.975, 13, n - 12)))
    p_a, p_b = 30 / n, 12 / n
    corr = -math.sqrt(p_a * p_b / ((1 - p_a) * (1 - p_b)))
    exact_low = diff - math.sqrt((p_b - low_b) ** 2 + (high_a - p_a) ** 2 - 2 * corr * (p_b - low_b) * (high_a - p_a))
    exact_high = diff + math.sqrt((high_b - p_b) ** 2 + (p_a - low_a) ** 2 - 2 * corr * (high_b - p_b) * (p_a - low_a))
    exact_se = max(diff - exact_low, exact_high - diff) / t
    assert exact_se > math.sqrt(variance)
    assert result.clustered_test.standard_error == pytest.approx(exact_se)
    d = result.accuracy_difference
    assert d.low <= exact_low + 1e-12 and d.high >= exact_high - 1e-12


def test_difference_accuracies_and_coverage_count_each_targets_covered_units() -> None:
    a = [1, 1, 0, None, 1, 0]
    b = [1, 0, 0, 1, None, None]
    result = compare_paired(a, b, [0, 0, 1, 1, 2, 2])
    assert result.accuracy_a == pytest.approx(3 / 5) and result.accuracy_b == pytest.approx(2 / 4)
    assert result.coverage_a == pytest.approx(5 / 6) and result.coverage_b == pytest.approx(4 / 6)
    assert result.accuracy_difference.estimate == pytest.approx(2 / 4 - 3 / 5)
    assert result.coverage_difference.estimate == pytest.approx(4 / 6 - 5 / 6)
    with pytest.raises(ValueError):
        compare_paired([1, 0], [1], [0, 0])
    with pytest.raises(ValueError):
        compare_paired([2], [1], [0])


def test_many_documents_use_the_t_interval_on_the_cluster_test_standard_error() -> None:
    """40 documents (above the old switch to the bootstrap): estimate +- t_39 x the test's standard
    error, so the interval leaves out 0 exactly when the cluster test rejects at 0.05."""
    a, b, docs = clustered_pair(1, shift=0.1)
    first = compare_paired(a, b, docs)
    assert first == compare_paired(a, b, docs)
    d = first.accuracy_difference
    assert not first.small_sample and d.method.startswith("t on documents - 1 df")
    half = float(sps.t.ppf(0.975, 39)) * first.clustered_test.standard_error
    assert (d.low, d.high) == pytest.approx((d.estimate - half, d.estimate + half))
    assert (first.clustered_test.p_value < 0.05) == (d.low > 0 or d.high < 0)
    assert first.design_effect > 1  # the simulated difference is clustered by document
    assert first.power.minimum_detectable_effect > 0


def test_clustering_widens_what_mcnemar_calls_certain() -> None:
    # B is better on half of the documents and worse on the other half: no difference overall, but
    # every document's units move together
    a, b, docs = [], [], []
    for doc in range(40):
        better = doc % 2 == 0
        for _ in range(10):
            a.append(0 if better else 1)
            b.append(1 if better else 0)
            docs.append(doc)
    b[0] = 0  # a small imbalance: B wins 199, A 200
    result = compare_paired(a, b, docs)
    assert result.clustered_test.standard_error > 3 * math.sqrt(1 / len(a))
    assert result.icc_difference > 0.9


def test_few_documents_switch_to_the_small_sample_interval_and_say_so() -> None:
    a, b, docs = clustered_pair(2, documents=5)
    result = compare_paired(a, b, docs)
    assert result.small_sample and result.n_resamples == 0
    assert result.accuracy_difference.small_sample
    assert "t on documents - 1 df" in result.accuracy_difference.method
    assert result.clustered_test.df == 4


def test_no_zero_width_interval_for_data_that_vary() -> None:
    # two documents whose differences happen to agree exactly, and a table with no discordant unit
    result = compare_paired([1, 0, 1, 0], [0, 1, 1, 0], [0, 0, 1, 1])
    assert result.accuracy_difference.high > result.accuracy_difference.low
    result = compare_paired([1, 1, 0, 1], [1, 1, 0, 1], [0, 0, 1, 1])
    assert result.accuracy_difference.high > result.accuracy_difference.low
    rng = np.random.default_rng(7)
    for _ in range(30):
        size = int(rng.integers(4, 30))
        a = rng.integers(0, 2, size).tolist()
        b = rng.integers(0, 2, size).tolist()
        docs = rng.integers(0, int(rng.integers(2, 12)), size).tolist()
        d = compare_paired(a, b, docs).accuracy_difference
        assert d.high > d.low


def test_subgroups_are_adjusted_by_benjamini_hochberg_as_statsmodels_does() -> None:
    a, b, docs = clustered_pair(3, documents=60, shift=0.05)
    topics = [d % 4 for d in docs]
    rows = paired_subgroups(a, b, docs, topics)
    assert sorted(r.key for r in rows) == ["0", "1", "2", "3"]
    assert all(r.test == "cluster" for r in rows)
    p = np.array([r.p_value for r in rows])
    reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
    assert [r.p_adjusted for r in rows] == pytest.approx(adjusted.tolist())
    assert [r.significant for r in rows] == reject.tolist()


def test_subgroups_of_one_document_use_mcnemars_exact_test() -> None:
    a, b, docs = clustered_pair(4, documents=3, units=12)
    rows = paired_subgroups(a, b, docs, docs)
    assert {r.test for r in rows} == {"mcnemar exact"}
    assert all(r.n_documents == 1 for r in rows)
    for r in rows:
        idx = [j for j, d in enumerate(docs) if str(d) == r.key]
        assert r.p_value == pytest.approx(mcnemar_exact([a[j] for j in idx], [b[j] for j in idx]).p_value)


def test_non_inferiority_passes_a_better_new_and_fails_a_clearly_worse_one() -> None:
    base, new, docs = clustered_pair(5, documents=60, shift=0.1)
    good = non_inferiority(base, new, docs, margin=0.02)
    assert good.passed and good.lower_bound > -0.02 and good.p_value < 0.05
    assert good.line().startswith("PASS")
    bad = non_inferiority(new, base, docs, margin=0.02)
    assert not bad.passed and bad.line().startswith("FAIL")
    assert 0 < bad.power < 1
    with pytest.raises(ValueError):
        non_inferiority(base, new, docs, margin=-0.1)


def test_non_inferiority_bound_is_the_one_sided_end_of_the_comparison() -> None:
    base, new, docs = clustered_pair(6, documents=50)
    decision = non_inferiority(base, new, docs, margin=0.05, alpha=0.05)
    two_sided_90 = compare_paired(base, new, docs, level=0.90).accuracy_difference
    assert decision.lower_bound == pytest.approx(two_sided_90.low)
    assert decision.passed == (two_sided_90.low > -0.05)


def test_identical_targets_keep_a_defined_test_power_and_gate() -> None:
    """Two targets with the same outcome on every unit have a zero sample variance; the standard error
    falls back to the exact floor, so the gate's p-value and power are numbers (a run gated against
    itself printed `power nan`)."""
    outcomes = [1, 0, 1, 1, 0, 1, 1, 1] * 5
    documents = [i // 4 for i in range(len(outcomes))]
    result = compare_paired(outcomes, outcomes, documents)
    assert result.accuracy_difference.estimate == 0 and result.accuracy_difference.standard_error > 0
    assert math.isfinite(result.power.achieved) and math.isfinite(result.clustered_test.p_value)
    decision = non_inferiority(outcomes, outcomes, documents, margin=0.5)
    assert decision.passed and 0 < decision.power <= 1 and "nan" not in decision.line()


def test_small_sample_differences_and_subgroups_are_clipped_to_minus_one_one() -> None:
    """B right everywhere A is wrong, over 3 documents: the t interval on 2 df would pass 1; a difference of
    two proportions cannot, so the interval stops at 1 (and a subgroup's the same)."""
    a, b = [0] * 9, [1] * 9
    docs = [f"d{i // 3}" for i in range(9)]
    found = compare_paired(a, b, docs)
    d = found.accuracy_difference
    assert d.small_sample and d.estimate == 1.0
    assert -1.0 <= d.low < 1.0 and d.high == 1.0
    reverse = compare_paired(b, a, docs).accuracy_difference
    assert reverse.low == -1.0 and reverse.high > -1.0
    for row in paired_subgroups(a, b, docs, ["x"] * 5 + ["y"] * 4):
        assert -1.0 <= row.low <= row.difference <= row.high <= 1.0
    assert max(r.high for r in paired_subgroups(a, b, docs, ["x"] * 5 + ["y"] * 4)) == 1.0


def test_a_run_against_itself_on_12_documents_supports_the_exact_margin_only() -> None:
    """87 units in 12 documents, held against themselves: no discordant unit, so the bound is the exact
    one-sided 95 % bound of a share seen 0 times in 87, 1 - 0.05^(1/87) = 0.0338 (scipy's beta, computed
    here independently); the gate passes just above it, fails at 0.03 and says why."""
    outcomes = [1, 1, 0, 1, 0, 1, 1] * 12 + [1, 0, 1]
    documents = [i % 12 for i in range(len(outcomes))]
    expected = float(sps.beta.ppf(0.95, 1, len(outcomes)))
    assert expected == pytest.approx(1 - 0.05 ** (1 / 87))
    at_03 = non_inferiority(outcomes, outcomes, documents, margin=0.03)
    assert at_03.smallest_margin == pytest.approx(expected, rel=1e-9) and expected > 0.03
    assert not at_03.passed and at_03.below_smallest
    assert "smallest margin these runs can support: 0.034" in at_03.line()
    assert "a NEW measured as good as BASE fails it too" in at_03.line()
    printed = float(margin_text(at_03.smallest_margin))
    passing = non_inferiority(outcomes, outcomes, documents, margin=printed)
    assert passing.passed and not passing.below_smallest and "fails it too" not in passing.line()
    below = non_inferiority(outcomes, outcomes, documents, margin=printed - 0.001)
    assert not below.passed and below.below_smallest


def test_the_smallest_margin_is_the_gap_to_the_one_sided_bound_in_compare_and_gate() -> None:
    """compare_paired's smallest margin is the gate's (one-sided 95 %), the difference minus
    the two-sided 90 % interval's low end; a worse NEW that fails above it gets no hint."""
    base, new, docs = clustered_pair(6, documents=50)
    decision = non_inferiority(base, new, docs, margin=0.05)
    compared = compare_paired(base, new, docs)
    ninety = compare_paired(base, new, docs, level=0.90).accuracy_difference
    assert compared.smallest_margin == pytest.approx(decision.smallest_margin)
    assert decision.smallest_margin == pytest.approx(ninety.estimate - ninety.low)
    worse = non_inferiority(base, [0] * len(base), docs, margin=0.5)
    assert not worse.passed and not worse.below_smallest and "fails it too" not in worse.line()


@pytest.mark.parametrize(("value", "text"), [(0.0202, "0.021"), (0.02, "0.021"), (0.0, "0.001"),
                                             (math.nan, "n/a")])
def test_the_printed_smallest_margin_is_rounded_up_past_the_bound(value: float, text: str) -> None:
    assert margin_text(value) == text


@pytest.mark.parametrize("documents", [4, 30, 40, 100])
def test_a_target_held_against_itself_never_gets_a_zero_bound_at_any_size(documents: int) -> None:
    """The self-comparison of issue 40: no discordant unit, so every interval (compare's and the gate's)
    is at least the exact one; no jump at 30 documents, and the gate at 0.001 fails at every size."""
    rng = np.random.default_rng(documents)
    outcomes = rng.integers(0, 2, documents * 9).tolist()
    docs = [i // 9 for i in range(len(outcomes))]
    n = len(outcomes)
    decision = non_inferiority(outcomes, outcomes, docs, margin=0.001)
    exact = float(sps.beta.ppf(0.95, 1, n))  # one-sided 95 % bound of a share seen 0 times in n
    assert decision.lower_bound <= -exact + 1e-12 and not decision.passed
    result = compare_paired(outcomes, outcomes, docs)
    assert result.accuracy_difference.low <= -float(sps.beta.ppf(0.975, 1, n)) + 1e-12
    assert result.power.minimum_detectable_effect > float(sps.beta.ppf(0.975, 1, n))  # was 0.001 at 30+


def test_the_exact_bound_of_352_units_without_discordance_is_minus_0_0085() -> None:
    """The figure issue 40 quotes: 0 discordant of 352 units, one-sided 95 %: -0.0085."""
    from examiner.stats.intervals import exact_paired_bounds

    low, high = exact_paired_bounds(0, 0, 352, level=0.90)
    assert low == pytest.approx(-0.0085, abs=5e-5) and high == pytest.approx(-low)


def test_interval_test_and_gate_agree_on_random_clustered_data() -> None:
    """The cluster test rejects at 0.05 exactly when the 95 % interval leaves out 0, and the gate passes
    exactly when its p-value is below alpha, at sizes on both sides of 30 documents."""
    for seed in range(40):
        documents = [8, 25, 30, 35, 60][seed % 5]
        a, b, docs = clustered_pair(100 + seed, documents=documents, shift=0.06)
        result = compare_paired(a, b, docs)
        d = result.accuracy_difference
        assert (result.clustered_test.p_value < 0.05) == (d.low > 0 or d.high < 0)
        decision = non_inferiority(a, b, docs, margin=0.02)
        assert decision.passed == (decision.p_value < 0.05)
