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


def test_with_every_unit_its_own_document_the_cluster_test_is_mcnemars_asymptotic_one() -> None:
    a, b = table_units(60, 30, 12, 48)
    result = compare_paired(a, b, list(range(len(a))))
    n, diff = len(a), (12 - 30) / len(a)
    variance = ((30 + 12) / n - diff**2) / n * n / (n - 1)
    assert result.accuracy_difference.estimate == pytest.approx(diff)
    assert result.clustered_test.standard_error == pytest.approx(math.sqrt(variance))
    assert result.design_effect == pytest.approx(1.0)


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


def test_many_documents_use_the_seeded_bootstrap_and_the_interval_holds_the_estimate() -> None:
    a, b, docs = clustered_pair(1, shift=0.1)
    first = compare_paired(a, b, docs, seed=5)
    again = compare_paired(a, b, docs, seed=5)
    assert first == again
    d = first.accuracy_difference
    assert not first.small_sample and d.method.startswith("cluster bootstrap")
    assert d.low < d.estimate < d.high
    assert first.design_effect > 1  # the simulated difference is clustered by document
    assert 0 < first.power.achieved < 1 and first.power.minimum_detectable_effect > 0
    two_stage = compare_paired(a, b, docs, [j % 2 for j in range(len(a))], seed=5, two_stage=True).accuracy_difference
    assert "two-stage" in two_stage.method and two_stage.high - two_stage.low > 0


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
    assert "t on groups - 1 df" in result.accuracy_difference.method
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
        d = compare_paired(a, b, docs, n_resamples=200).accuracy_difference
        assert d.high > d.low


def test_subgroups_are_adjusted_by_benjamini_hochberg_as_statsmodels_does() -> None:
    a, b, docs = clustered_pair(3, documents=60, shift=0.05)
    topics = [d % 4 for d in docs]
    rows = paired_subgroups(a, b, docs, topics, n_resamples=200)
    assert sorted(r.key for r in rows) == ["0", "1", "2", "3"]
    assert all(r.test == "cluster" for r in rows)
    p = np.array([r.p_value for r in rows])
    reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
    assert [r.p_adjusted for r in rows] == pytest.approx(adjusted.tolist())
    assert [r.significant for r in rows] == reject.tolist()


def test_subgroups_of_one_document_use_mcnemars_exact_test() -> None:
    a, b, docs = clustered_pair(4, documents=3, units=12)
    rows = paired_subgroups(a, b, docs, docs, n_resamples=100)
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
    decision = non_inferiority(base, new, docs, margin=0.05, alpha=0.05, seed=2)
    two_sided_90 = compare_paired(base, new, docs, level=0.90, seed=2).accuracy_difference
    assert decision.lower_bound == pytest.approx(two_sided_90.low)
    assert decision.passed == (two_sided_90.low > -0.05)


def test_identical_targets_keep_a_defined_test_power_and_gate() -> None:
    """Two targets with the same outcome on every unit have a zero sample variance; the standard error
    falls back to the Agresti-Min floor, so the gate's p-value and power are numbers (a run gated
    against itself printed `power nan`)."""
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


def test_a_run_against_itself_on_12_documents_supports_the_agresti_min_t_margin_only() -> None:
    """87 units in 12 documents, held against themselves: the bound is the small-sample t bound with the
    Agresti-Min standard error 1 / (n + 2), so the smallest margin is t(0.95, 11) / 89 = 0.0202 (scipy,
    computed here independently); the gate passes just above it, fails at 0.02 and says why."""
    outcomes = [1, 1, 0, 1, 0, 1, 1] * 12 + [1, 0, 1]
    documents = [i % 12 for i in range(len(outcomes))]
    expected = float(sps.t.ppf(0.95, 11)) / (len(outcomes) + 2)
    at_02 = non_inferiority(outcomes, outcomes, documents, margin=0.02)
    assert at_02.smallest_margin == pytest.approx(expected, rel=1e-9) and expected > 0.02
    assert not at_02.passed and at_02.below_smallest
    assert "smallest margin these runs can support: 0.021" in at_02.line()
    assert "a NEW measured as good as BASE fails it too" in at_02.line()
    printed = float(margin_text(at_02.smallest_margin))
    passing = non_inferiority(outcomes, outcomes, documents, margin=printed)
    assert passing.passed and not passing.below_smallest and "fails it too" not in passing.line()
    below = non_inferiority(outcomes, outcomes, documents, margin=printed - 0.001)
    assert not below.passed and below.below_smallest


def test_the_smallest_margin_is_the_gap_to_the_one_sided_bound_in_compare_and_gate() -> None:
    """compare_paired's smallest margin is the gate's (same draws, one-sided 95 %), the difference minus
    the two-sided 90 % interval's low end; a worse NEW that fails above it gets no hint."""
    base, new, docs = clustered_pair(6, documents=50)
    decision = non_inferiority(base, new, docs, margin=0.05, seed=2)
    compared = compare_paired(base, new, docs, seed=2)
    ninety = compare_paired(base, new, docs, level=0.90, seed=2).accuracy_difference
    assert compared.smallest_margin == pytest.approx(decision.smallest_margin)
    assert decision.smallest_margin == pytest.approx(ninety.estimate - ninety.low)
    worse = non_inferiority(base, [0] * len(base), docs, margin=0.5, seed=2)
    assert not worse.passed and not worse.below_smallest and "fails it too" not in worse.line()


@pytest.mark.parametrize(("value", "text"), [(0.0202, "0.021"), (0.02, "0.021"), (0.0, "0.001"),
                                             (math.nan, "n/a")])
def test_the_printed_smallest_margin_is_rounded_up_past_the_bound(value: float, text: str) -> None:
    assert margin_text(value) == text
