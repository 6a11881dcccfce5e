"""Wording variance: the crossed analysis against an ordinary least squares ANOVA, recovery of an injected
wording effect, the judge's part, the cross-document weight and the rank-flip chance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from examiner.stats.wording import (crossed_parts, cross_document_weight, decompose, judge_variance,
                                    rank_flip_probability, wording_aware_variance)


def tables(seed: int, n: int, sd: float, wordings: int = 3, units: int = 6) -> list[np.ndarray]:
    """Per question: unit chances from a beta, a normal shift per wording, 0/1 outcomes."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(n):
        p = rng.beta(2, 2, units)
        shift = rng.normal(0, sd, (wordings, 1))
        found.append((rng.random((wordings, units)) < np.clip(p[None, :] + shift, 0, 1)).astype(float))
    return found


def test_one_table_matches_the_two_way_anova_without_replication() -> None:
    y = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 0], [1, 1, 1, 1, 0]], dtype=float)
    rows, cols = np.indices(y.shape)
    frame = pd.DataFrame({"y": y.ravel(), "w": rows.ravel(), "u": cols.ravel()})
    table = anova_lm(smf.ols("y ~ C(w) + C(u)", frame).fit())
    ms_w, ms_e = table.loc["C(w)", "mean_sq"], table.loc["Residual", "mean_sq"]
    parts = crossed_parts([y])
    assert parts.noise == pytest.approx(ms_e)
    assert parts.wording_unclipped == pytest.approx((ms_w - ms_e) / y.shape[1])
    assert parts.wording == max(0.0, parts.wording_unclipped)
    assert (parts.tables, parts.extra_wordings) == (1, 2)


def test_an_injected_wording_effect_is_recovered_and_none_is_found_where_none_was_put() -> None:
    with_effect = crossed_parts(tables(1, 3000, 0.1))
    assert with_effect.wording == pytest.approx(0.01, rel=0.15)
    without = crossed_parts(tables(2, 3000, 0.0))
    assert without.wording < 0.001 and abs(without.wording_unclipped) < 0.001
    assert without.noise == pytest.approx(with_effect.noise, rel=0.1)


def test_tables_too_small_carry_nothing() -> None:
    parts = crossed_parts([np.ones((1, 4)), np.ones((3, 1))])
    assert parts.tables == 0 and math.isnan(parts.wording)


def test_judge_variance_is_the_variance_of_one_marking() -> None:
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 2, 200_000)
    flip = 0.1
    first = np.where(rng.random(truth.size) < flip, 1 - truth, truth)
    second = np.where(rng.random(truth.size) < flip, 1 - truth, truth)
    assert judge_variance(first, second) == pytest.approx(flip * (1 - flip), rel=0.03)
    assert math.isnan(judge_variance([], []))
    with pytest.raises(ValueError):
        judge_variance([1], [1, 0])


def test_decompose_shares_add_up_and_the_wording_share_is_near_the_truth() -> None:
    sd, units = 0.1, 6
    data = tables(4, 3000, sd, units=units)
    first = [float(t[0].mean()) for t in data]
    parts = decompose(first, [units] * len(first), crossed_parts(data), 0.02, rejudged_units=500)
    assert parts.total == pytest.approx(parts.cluster + parts.wording + parts.judge + parts.answer_noise)
    assert parts.wording == pytest.approx(sd**2, rel=0.15)
    assert parts.judge == pytest.approx(0.02 / units)
    assert parts.rejudged_units == 500
    unknown = decompose(first, [units] * len(first), crossed_parts(data), math.nan)
    assert math.isnan(unknown.judge) and unknown.answer_noise == pytest.approx(parts.answer_noise + parts.judge)


def test_cross_document_weight_counts_only_pairs_of_one_question_in_different_documents() -> None:
    questions = ["q1", "q1", "q1", "q2"]
    documents = ["a", "a", "b", "c"]
    assert cross_document_weight(questions, documents) == pytest.approx((9 - 5) / 16)
    assert cross_document_weight(questions, ["a", "a", "a", "c"]) == 0.0
    assert wording_aware_variance(0.001, 0.02, questions, documents) == pytest.approx(0.001 + 0.02 * 4 / 16)
    assert wording_aware_variance(0.001, math.nan, questions, documents) == 0.001


def test_rank_flip_probability() -> None:
    questions = ["q1"] * 4 + ["q2"] * 4
    spread = math.sqrt(2 * 0.01 * 32 / 64)
    assert rank_flip_probability(0.05, 0.01, questions) == pytest.approx(float(
        0.5 * math.erfc(0.05 / spread / math.sqrt(2))))
    assert rank_flip_probability(0.05, 0.0, questions) == 0.0
    assert rank_flip_probability(-0.05, 0.01, questions) == rank_flip_probability(0.05, 0.01, questions)
    assert math.isnan(rank_flip_probability(0.05, math.nan, questions))


def test_the_gate_widens_its_bound_by_the_wording_variance() -> None:
    from scipy import stats as sps

    from examiner.stats.paired import non_inferiority

    rng = np.random.default_rng(5)
    docs = np.repeat(np.arange(30), 6)
    a = (rng.random(docs.size) < 0.6).astype(int).tolist()
    b = (rng.random(docs.size) < 0.65).astype(int).tolist()
    blind = non_inferiority(a, b, docs.tolist(), 0.05)
    aware = non_inferiority(a, b, docs.tolist(), 0.05, wording_variance=0.0005)
    se = math.sqrt(blind.standard_error**2 + 0.0005)
    assert aware.standard_error == pytest.approx(se)
    assert aware.lower_bound == pytest.approx(blind.difference - float(sps.t.ppf(0.95, 29)) * se)
    assert aware.lower_bound < blind.lower_bound and aware.difference == blind.difference
    assert "wording-aware" in aware.line() and "wording-aware" not in blind.line()
    assert non_inferiority(a, b, docs.tolist(), 0.05, wording_variance=math.nan) == blind
