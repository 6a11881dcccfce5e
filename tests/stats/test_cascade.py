"""Cascade thresholds (examiner.stats.cascade): fixed-sequence testing keeps the promised agreement rate
(risk-controlled) and escalates everything when the confidence says nothing."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.simulator.judge_quality import JudgeQuality, simulate_judge
from examiner.stats.cascade import calibrate_threshold, candidate_thresholds, min_testable, route


def test_fewest_testable_units() -> None:
    # 0.9^21 = 0.109 > 0.1, 0.9^22 = 0.098: 22 agreeing units are the fewest that can pass at risk 0.1
    assert min_testable(0.9, 0.1) == 22
    assert min_testable(0.95, 0.05) == 59


def test_informative_confidence_keeps_the_confident_units() -> None:
    conf = np.linspace(0, 1, 400)
    agrees = conf > 0.3  # every unit above 0.3 agrees, none below
    result = calibrate_threshold(conf, agrees, target_agreement=0.9, risk=0.1)
    assert 0.2 < result.threshold <= 0.31  # it may keep a few disagreeing units while the kept set stays above 0.9
    assert result.agreement_in_calibration is not None and result.agreement_in_calibration >= 0.9
    assert route([0.2, 0.5, 0.99], result).tolist() == [False, True, True]


def test_the_sequence_stops_at_the_first_threshold_it_cannot_pass() -> None:
    # the 50 most confident units agree, the next 50 all disagree, the 300 below agree again: the
    # sequence must stop in the disagreeing band and never reach the lower thresholds
    conf = np.linspace(1, 0, 400)
    agrees = np.ones(400, dtype=bool)
    agrees[50:100] = False
    result = calibrate_threshold(conf, agrees, target_agreement=0.9, risk=0.1)
    assert result.kept_in_calibration <= 60
    assert not result.steps[-1].rejected and all(step.rejected for step in result.steps[:-1])


def test_uninformative_confidence_below_target_escalates_everything() -> None:
    rng = np.random.default_rng(5)
    verdicts = simulate_judge(rng.integers(0, 3, 500), JudgeQuality(0.8, "uninformative"), 3, rng)
    result = calibrate_threshold(verdicts.confidences, verdicts.agrees, target_agreement=0.9, risk=0.1)
    assert not result.keeps_any and result.kept_in_calibration == 0
    assert not route(verdicts.confidences, result).any()


def test_the_guarantee_holds_over_repetitions() -> None:
    """The promise is about a rate: in at most about `risk` of calibrations does the population disagreement
    rate above the chosen threshold exceed 1 - target. A calibrated judge's confidence is its chance p of
    agreeing, p ~ Beta(a, b), so that rate is exact: 1 - E[p | p >= t]. Seeded; experiments/judge_cascade.py
    runs 1,000 calibrations of the full-size case and prints the realised share's failures beside it."""
    from scipy.stats import beta

    quality = JudgeQuality(0.85, "calibrated")
    a, b = quality.agreement * quality.concentration, (1 - quality.agreement) * quality.concentration

    def population_disagreement(t: float) -> float:
        return 1 - a / (a + b) * beta.sf(t, a + 1, b) / beta.sf(t, a, b)

    rng = np.random.default_rng(11)
    failed = []
    for _ in range(200):
        reference = rng.integers(0, 3, 300)
        cheap = simulate_judge(reference, quality, 3, rng)
        threshold = calibrate_threshold(cheap.confidences, cheap.agrees, target_agreement=0.9, risk=0.1)
        failed.append(threshold.keeps_any and population_disagreement(threshold.threshold) > 0.1)
    assert 0 < np.mean(failed) <= 0.12  # risk 0.1, plus two binomial standard errors' worth of slack (0.02)


def test_candidates_run_from_the_most_confident_down_and_thin_out() -> None:
    values = candidate_thresholds(np.arange(1000) / 1000, max_candidates=50)
    assert len(values) == 50 and values == sorted(values, reverse=True)
    assert values[0] == pytest.approx(0.999)


@pytest.mark.parametrize("kwargs", [{"target_agreement": 1.0, "risk": 0.1}, {"target_agreement": 0.9, "risk": 0.0}])
def test_impossible_settings_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        calibrate_threshold([0.5], [True], **kwargs)
