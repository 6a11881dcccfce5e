"""PPI++ for a ratio (examiner/stats/ppi_ratio.py): the hallucination rate calibrated by a random sample of
people's labels covers the true rate at about its level, removes a biased judge's bias, and refuses what
it cannot estimate."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.stats.ppi_ratio import ppi_ratio

SHARES = np.array([0.5, 0.3, 0.2])
"""The true shares of correct (0), incorrect (1) and abstained (2) units: hallucination 0.3 / 0.8."""
TRUE_RATE = 0.3 / 0.8


def _pairs(labels: np.ndarray) -> list[tuple[int, int]]:
    return [(int(x == 1), int(x < 2)) for x in labels]


def _draw(rng: np.random.Generator, n: int, big_n: int, judge_of: object) -> tuple[list, list, list]:
    truth = rng.choice(3, size=big_n, p=SHARES)
    judge = judge_of(truth, rng)  # type: ignore[operator]
    labelled = np.zeros(big_n, bool)
    labelled[rng.choice(big_n, size=n, replace=False)] = True
    return _pairs(truth[labelled]), _pairs(judge[labelled]), _pairs(judge[~labelled])


def _noisy(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Right on 80 % of units, another label at random otherwise."""
    return np.where(rng.random(truth.size) < 0.8, truth, (truth + rng.integers(1, 3, size=truth.size)) % 3)


def _inventing(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Calls 60 % of the declined answers incorrect: its own hallucination rate is far too high."""
    return np.where((truth == 2) & (rng.random(truth.size) < 0.6), 1, truth)


def test_the_interval_covers_the_true_rate_at_about_its_level() -> None:
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(400):
        estimate, _ = ppi_ratio(*_draw(rng, 100, 800, _noisy))
        hits += estimate.low <= TRUE_RATE <= estimate.high
    assert 0.92 <= hits / 400 <= 0.98


def test_a_biased_judges_bias_is_removed() -> None:
    rng = np.random.default_rng(3)
    estimates, raw = [], []
    for _ in range(300):
        human, labelled, unlabelled = _draw(rng, 80, 800, _inventing)
        estimates.append(ppi_ratio(human, labelled, unlabelled)[0].estimate)
        judge = labelled + unlabelled
        raw.append(sum(x for x, _ in judge) / sum(a for _, a in judge))
    assert np.mean(raw) - TRUE_RATE > 0.06  # the judge alone is far off (about +0.08)
    assert abs(np.mean(estimates) - TRUE_RATE) < 0.01


def test_what_cannot_be_estimated_is_refused() -> None:
    with pytest.raises(ValueError, match="at least two"):
        ppi_ratio([(1, 1)], [(1, 1)], [(0, 1)])
    with pytest.raises(ValueError, match="did not label"):
        ppi_ratio([(1, 1), (0, 1)], [(1, 1), (0, 1)], [])
    with pytest.raises(ValueError, match="nothing attempted"):
        ppi_ratio([(0, 0), (0, 0)], [(0, 0), (0, 0)], [(0, 0)])
