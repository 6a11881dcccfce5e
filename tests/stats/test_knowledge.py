"""The knowledge-boundary figures against hand computations and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from examiner.agents.candidate.confidence import stated_confidence, token_confidence
from examiner.llm import TokenLogprob
from examiner.stats.knowledge import (brier_score, expected_calibration_error, penalised_score, reliability_bins,
                                      risk_coverage_area, simpleqa_f)


def test_simpleqa_f_and_penalised_score() -> None:
    # SimpleQA's paper: overall correct 0.4, correct given attempted 0.8 -> F = 2*0.32/1.2.
    assert simpleqa_f(0.4, 0.8) == pytest.approx(0.5333, abs=1e-4)
    assert simpleqa_f(None, 0.8) is None and simpleqa_f(0.0, 0.0) is None
    # 6 right, 2 wrong, 2 declined: at t=0.75 an error costs 3 -> (6 - 6) / 10 = 0.
    assert penalised_score(6, 2, 10, 0.75) == pytest.approx(0.0)
    assert penalised_score(6, 2, 10, 0.5) == pytest.approx(0.4)
    assert penalised_score(0, 0, 0, 0.5) is None
    with pytest.raises(ValueError):
        penalised_score(1, 1, 2, 1.0)


def test_ece_by_hand_and_brier_as_scikit_learn() -> None:
    conf = [0.95, 0.95, 0.95, 0.95, 0.15, 0.15]
    right = [1, 1, 1, 0, 0, 1]
    # bins: 0.9-1.0 holds 4 (mean conf 0.95, right 0.75), 0.1-0.2 holds 2 (0.15, 0.5)
    plug_in = (4 * 0.20 + 2 * 0.35) / 6
    assert expected_calibration_error(conf, right, debias=False) == pytest.approx(plug_in)
    # the debiased figure takes off the plug-in's sampling excess: lower, never negative, seeded
    debiased = expected_calibration_error(conf, right)
    assert debiased is not None and 0 <= debiased < plug_in
    assert expected_calibration_error(conf, right) == debiased
    assert brier_score(conf, right) == pytest.approx(brier_score_loss(right, conf))
    assert reliability_bins(conf, right) == [(pytest.approx(0.15), 0.5, 2), (pytest.approx(0.95), 0.75, 4)]
    assert expected_calibration_error([None, 0.5], [1, 0], debias=False) == pytest.approx(0.5)
    assert expected_calibration_error([None], [1]) is None
    with pytest.raises(ValueError):
        brier_score([1.5], [1])


def test_risk_coverage_area_rewards_confidence_that_ranks_errors_last() -> None:
    right = [1, 1, 0, 0]
    good = risk_coverage_area([0.9, 0.8, 0.3, 0.2], right)
    bad = risk_coverage_area([0.2, 0.3, 0.8, 0.9], right)
    # good: risks 0, 0, 1/3, 1/2 -> mean 0.2083; bad: 1, 1, 2/3, 1/2 -> 0.7917
    assert good == pytest.approx((0 + 0 + 1 / 3 + 1 / 2) / 4)
    assert bad == pytest.approx((1 + 1 + 2 / 3 + 1 / 2) / 4)
    # all tied: every prefix has the overall error rate, whatever the order
    assert risk_coverage_area([0.5] * 4, right) == pytest.approx(0.5)


@pytest.mark.parametrize("text, answer, value", [
    ("Paris is the capital.\nConfidence: 80%", "Paris is the capital.", 0.8),
    ("Paris. (confidence: 0.7)", "Paris.", 0.7),
    ("I think so. **Confidence:** 95 percent.", "I think so.", 0.95),
    ("It is blue. Confidence 60", "It is blue.", 0.6),
    ("No line at all.", "No line at all.", None),
    ("Confidence: 250%", "Confidence: 250%", None),
])
def test_stated_confidence_is_read_tolerantly(text: str, answer: str, value: float | None) -> None:
    assert stated_confidence(text) == (answer, value)


def test_token_confidence_is_the_geometric_mean_probability() -> None:
    tokens = [TokenLogprob("a", float(np.log(0.5))), TokenLogprob("b", float(np.log(0.8)))]
    assert token_confidence(tokens) == pytest.approx(np.sqrt(0.4))
    assert token_confidence(None) is None


def test_debiased_ece_of_a_calibrated_target_is_near_zero_where_the_plug_in_is_not() -> None:
    rng = np.random.default_rng(3)
    chance = rng.uniform(0.05, 0.95, 600)
    right = (rng.random(600) < chance).astype(int).tolist()
    plug_in = expected_calibration_error(chance.tolist(), right, debias=False)
    debiased = expected_calibration_error(chance.tolist(), right)
    assert plug_in is not None and debiased is not None
    assert plug_in > 0.025 and debiased < plug_in - 0.01
