"""Prediction-powered accuracy (PPI++) and the judge's agreement with humans."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from examiner.stats.correlation import cohen_kappa
from examiner.stats.ppi import agreement, calibrated_accuracy, ppi_mean


def sample(seed: int, big_n: int = 5000, n: int = 300, fail_right: float = 0.05, pass_wrong: float = 0.3):
    rng = np.random.default_rng(seed)
    truth = (rng.random(big_n) < 0.6).astype(int)
    flip = rng.random(big_n)
    judge = np.where(truth == 1, (flip >= fail_right).astype(int), (flip < pass_wrong).astype(int))
    human: list[int | None] = [None] * big_n
    for i in rng.choice(big_n, size=n, replace=False):
        human[i] = int(truth[i])
    return truth, judge.tolist(), human


def test_lambda_zero_is_the_human_only_mean_and_lambda_one_is_ppi() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100).astype(float)
    f = rng.integers(0, 2, 100).astype(float)
    g = rng.integers(0, 2, 1000).astype(float)
    classical, lam = ppi_mean(y, f, g, lam=0.0)
    assert lam == 0.0 and classical.estimate == pytest.approx(y.mean())
    assert classical.standard_error == pytest.approx(y.std(ddof=1) / 10)
    ppi, _ = ppi_mean(y, f, g, lam=1.0)
    assert ppi.estimate == pytest.approx(y.mean() + g.mean() - f.mean())
    assert ppi.standard_error == pytest.approx(math.sqrt(np.var(y - f, ddof=1) / 100 + np.var(g, ddof=1) / 1000))


def test_a_perfect_judge_gives_the_all_units_figure_with_a_narrower_interval() -> None:
    truth, judge, human = sample(1, fail_right=0.0, pass_wrong=0.0)
    result = calibrated_accuracy(judge, human)
    # the tuned lambda is near N / (N + n), the weight that makes the estimate the mean over all units
    assert result.lam == pytest.approx(4700 / 5000, abs=0.1)
    assert result.ppi.estimate == pytest.approx(truth.mean(), abs=0.01)
    labelled = [i for i, h in enumerate(human) if h is not None]
    rest = np.delete(np.array(judge, dtype=float), labelled)
    y = np.array([human[i] for i in labelled], dtype=float)
    exact, _ = ppi_mean(y, y, rest, lam=4700 / 5000)
    assert exact.estimate == pytest.approx(truth.mean())
    assert result.ppi.high - result.ppi.low < 0.35 * (result.human_only.high - result.human_only.low)
    assert result.agreement.kappa == pytest.approx(1.0)
    assert result.judge_bias == pytest.approx(0.0, abs=0.01)


def test_a_lenient_judge_is_corrected_and_its_bias_shown() -> None:
    truth, judge, human = sample(2)
    result = calibrated_accuracy(judge, human)
    assert result.judge_raw.estimate - truth.mean() == pytest.approx(0.09, abs=0.02)  # 0.4 x 0.3 - 0.6 x 0.05
    assert result.ppi.low <= truth.mean() <= result.ppi.high
    assert result.judge_bias == pytest.approx(result.judge_raw.estimate - result.ppi.estimate)
    assert 0 < result.lam < 1 and result.ppi.method.startswith("PPI++ (power-tuned lambda)")
    assert result.ppi.high - result.ppi.low < result.human_only.high - result.human_only.low
    assert result.ppi.n == 300 and result.ppi.n_unlabelled == 4700


def test_half_cells_widen_the_variance_and_leave_the_estimate_alone() -> None:
    """The half unit per cell enters the variance only (issue 40: it shifted a rare label's estimate)."""
    y = np.array([1, 1, 0, 0, 1.0])
    f = np.array([1, 0, 0, 1, 1.0])
    g = np.array([1, 0, 1, 1.0])
    adjusted, _ = ppi_mean(y, f, g, lam=0.5, half_cells=True)
    padded_y = np.array([1, 1, 0, 0, 1, 0, 0, 1, 1.0])
    padded_f = np.array([1, 0, 0, 1, 1, 0, 1, 0, 1.0])
    w = np.array([1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5])
    r = padded_y - 0.5 * padded_f
    centre = np.average(r, weights=w)
    plain, _ = ppi_mean(y, f, g, lam=0.5)
    assert adjusted.estimate == pytest.approx(np.mean(y - 0.5 * f) + 0.5 * g.mean()) == plain.estimate
    assert adjusted.estimate != pytest.approx(centre + 0.5 * g.mean())
    spread = np.average((r - centre) ** 2, weights=w) * 7 / 6
    assert adjusted.standard_error == pytest.approx(math.sqrt(spread / 7 + 0.25 * np.var(g, ddof=1) / 4))
    with pytest.raises(ValueError):
        ppi_mean(y + 0.5, f, g, half_cells=True)


def test_a_judge_that_knows_nothing_leaves_the_human_figure_nearly_alone() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400).astype(float)
    f = rng.integers(0, 2, 400).astype(float)
    g = rng.integers(0, 2, 4000).astype(float)
    result, lam = ppi_mean(y, f, g)
    assert lam < 0.15
    assert abs(result.estimate - y.mean()) < 0.02


def test_unscored_units_are_left_out_and_counted() -> None:
    judge = [1, 0, None, 1, 1, 0, 1, 0]
    human = [1, 0, 1, None, None, None, None, 1]
    result = calibrated_accuracy(judge, human)
    assert result.n_left_out == 1
    assert result.human_only.n == 3 and result.ppi.n_unlabelled == 4
    with pytest.raises(ValueError):
        calibrated_accuracy([1, 0], [None, 1])


def test_agreement_kappa_equals_statsmodels_and_the_projects_kappa() -> None:
    human = [1] * 40 + [0] * 20 + [1] * 10 + [0] * 30
    judge = [1] * 40 + [0] * 20 + [0] * 10 + [1] * 30
    result = agreement(human, judge)
    table = np.array([[20, 30], [10, 40]])  # rows human 0/1, columns judge 0/1
    expected = cohens_kappa(table)
    assert result.kappa == pytest.approx(expected.kappa) == pytest.approx(cohen_kappa(human, judge))
    assert (result.kappa_low, result.kappa_high) == pytest.approx((expected.kappa_low, expected.kappa_upp))
    by_label = {row.label: row for row in result.per_label}
    assert by_label["1"].sensitivity == pytest.approx(40 / 50)  # of 50 units humans passed, the judge passed 40
    assert by_label["1"].specificity == pytest.approx(20 / 50)
    assert by_label["0"].sensitivity == pytest.approx(20 / 50)
    assert by_label["1"].sensitivity_low < 0.8 < by_label["1"].sensitivity_high
    assert result.observed == pytest.approx(0.6)


def test_a_tuned_lambda_is_cross_fitted_leave_one_out_in_the_estimate() -> None:
    """Unit i's correction uses the lambda of the other labelled units (computed here with numpy's own
    covariance), so the tuned lambda cannot pull the estimate; the reported lambda is all n's."""
    rng = np.random.default_rng(11)
    y = (rng.random(30) < 0.2).astype(float)
    f = np.where(y == 1, rng.random(30) < 0.6, rng.random(30) < 0.1).astype(float)
    g = (rng.random(400) < 0.15).astype(float)
    result, lam = ppi_mean(y, f, g)
    scale = (1 + 30 / 400) * np.var(np.concatenate([f, g]), ddof=1)
    assert lam == pytest.approx(np.clip(np.cov(y, f)[0, 1] / scale, 0, 1))
    loo = np.array([np.clip(np.cov(np.delete(y, i), np.delete(f, i))[0, 1] / scale, 0, 1) for i in range(30)])
    assert result.estimate == pytest.approx(np.mean(y + loo * (g.mean() - f)))
    fixed, _ = ppi_mean(y, f, g, lam=lam)
    assert fixed.estimate == pytest.approx(np.mean(y - lam * f) + lam * g.mean())
    assert fixed.standard_error == pytest.approx(result.standard_error)
