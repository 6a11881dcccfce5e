"""Power, minimum detectable effect and sample-size plans."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.power import NormalIndPower

from examiner.stats.planning import Design, design_from_pilot, minimum_detectable_effect, plan, power_at, predicted_power


def test_normal_power_agrees_with_statsmodels() -> None:
    for effect, se in ((0.05, 0.02), (0.01, 0.03), (-0.04, 0.015)):
        expected = NormalIndPower().power(effect_size=abs(effect) / se, nobs1=1, alpha=0.05, ratio=0)
        assert power_at(effect, se) == pytest.approx(expected)
    assert power_at(0.0, 0.1) == pytest.approx(0.05)
    assert power_at(0.0, 0.1, df=9) == pytest.approx(0.05)


def test_minimum_detectable_effect_inverts_power() -> None:
    se = 0.02
    normal = minimum_detectable_effect(se)
    assert normal == pytest.approx((sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * se)
    for df in (3, 12, 200):
        mde = minimum_detectable_effect(se, df=df)
        assert power_at(mde, se, df=df) == pytest.approx(0.8, abs=1e-6)
        assert mde > normal  # a t reference needs a larger effect
    assert math.isnan(minimum_detectable_effect(0.0))


def design(icc: float, m: float = 10.0, variance: float = 0.25) -> Design:
    return Design("accuracy", 0.5, variance, icc, math.nan, m, 1 + (m - 1) * icc, 100, 10)


def test_plan_to_detect_gives_the_fewest_documents_with_the_power_it_promises() -> None:
    d = design(icc=0.2)
    result = plan(d, detect=0.05, cost_per_unit=0.002)
    se = d.standard_error(result.units)
    assert power_at(0.05, se, df=result.documents - 1) >= 0.8
    fewer = result.documents - 1
    assert power_at(0.05, d.standard_error(fewer * 10), df=fewer - 1) < 0.8
    assert result.design_effect == pytest.approx(1 + 9 * 0.2)
    assert result.dollars == pytest.approx(result.units * 0.002)
    # clustering costs units: the same goal with independent units needs about a design effect fewer
    independent = plan(design(icc=0.0), detect=0.05)
    assert result.units / independent.units == pytest.approx(2.8, rel=0.05)


def test_plan_for_an_interval_half_width() -> None:
    d = design(icc=0.0, m=1.0)
    result = plan(d, half_width=0.02)
    # independent units: n = z^2 p(1-p) / w^2 = 2401, give or take the t reference
    assert 2401 <= result.units <= 2420
    assert result.power is None and result.goal == "half_width"
    with pytest.raises(ValueError):
        plan(d)
    with pytest.raises(ValueError):
        plan(d, detect=0.1, half_width=0.1)
    with pytest.raises(ValueError):
        plan(design(icc=0.0, variance=0.0), detect=0.1)


def test_design_from_pilot_measures_clustering() -> None:
    rng = np.random.default_rng(0)
    docs = np.repeat(np.arange(300), 10)
    p = rng.beta(0.7, 0.3, 300)  # ICC of the verdicts = 1 / (0.7 + 0.3 + 1) = 0.5
    outcomes = (rng.random(docs.size) < p[docs]).astype(int).tolist()
    d = design_from_pilot(outcomes, docs.tolist())
    assert d.quantity == "accuracy" and d.n_documents == 300 and d.units_per_document == 10
    assert d.icc_documents == pytest.approx(0.5, abs=0.06)
    assert d.design_effect == pytest.approx(1 + 9 * d.icc_documents, rel=0.1)
    paired = design_from_pilot(outcomes, docs.tolist(), outcomes_b=outcomes)
    assert paired.quantity == "paired difference" and paired.unit_variance == 0.0
    with pytest.raises(ValueError):
        design_from_pilot([None, None], [0, 1])


def test_predicted_power_grows_with_documents() -> None:
    d = design(icc=0.3)
    powers = [predicted_power(d, 0.05, docs) for docs in (20, 80, 320)]
    assert powers == sorted(powers) and powers[-1] > 0.8 > powers[0]
