"""Simulated judges of set quality agree as often as they are told to, and their confidence behaves as
its calibration says."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.simulator.judge_quality import CALIBRATIONS, JudgeQuality, simulate_judge


@pytest.mark.parametrize("calibration", [c for c in CALIBRATIONS if c != "samples"])
def test_raw_agreement_is_the_set_agreement(calibration: str) -> None:
    rng = np.random.default_rng(3)
    reference = rng.integers(0, 3, 20_000)
    verdicts = simulate_judge(reference, JudgeQuality(0.85, calibration), 3, rng)  # type: ignore[arg-type]
    assert verdicts.agrees.mean() == pytest.approx(0.85, abs=0.01)
    assert np.array_equal(verdicts.agrees, verdicts.labels == reference)
    assert ((verdicts.labels >= 0) & (verdicts.labels < 3)).all()


def test_calibrated_confidence_tracks_agreement_and_the_overconfident_does_not() -> None:
    rng = np.random.default_rng(4)
    reference = rng.integers(0, 2, 20_000)
    calibrated = simulate_judge(reference, JudgeQuality(0.85, "calibrated"), 2, rng)
    high = calibrated.confidences > 0.9
    assert calibrated.agrees[high].mean() > 0.94 and calibrated.agrees[~high].mean() < 0.8
    over = simulate_judge(reference, JudgeQuality(0.85, "overconfident"), 2, rng)
    assert over.confidences.min() >= 0.9  # always claims to be sure


def test_sampled_confidence_is_the_majority_share() -> None:
    rng = np.random.default_rng(6)
    verdicts = simulate_judge(rng.integers(0, 3, 1000), JudgeQuality(0.85, "samples", samples=5), 3, rng)
    assert set(np.round(verdicts.confidences * 5).astype(int)) <= {2, 3, 4, 5}
