"""What a model knows, does not know, and knows it does not know: the figures of docs/STATISTICS.md's
"Knowledge boundaries" section, from per-unit outcomes (correct, incorrect, abstained) and a stated confidence.

Why here and not in the report: the same functions score the simulated targets of
experiments/knowledge_boundaries.py, whose true values are known, and the real exams' reports.
SimpleQA's figures (Wei et al. 2024): overall correct, correct given attempted, and their harmonic mean F;
the penalised score of Kalai et al. 2025 ("Why language models hallucinate"): with a confidence target t an
error costs t / (1 - t) points, a right answer 1, a declined one 0, so answering pays only above confidence t.
Calibration: expected calibration error over equal-width bins and the Brier score of the stated confidence
against being right; selective prediction: the area under the risk-coverage curve (Geifman and El-Yaniv 2017).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PENALTY_TARGETS = (0.5, 0.75, 0.9)
"""Confidence targets t of the penalised score (errors cost t / (1 - t))."""
ECE_BINS = 10
"""Equal-width confidence bins of the expected calibration error."""


def simpleqa_f(accuracy: float | None, correct_given_attempted: float | None) -> float | None:
    """SimpleQA's F: the harmonic mean of overall correct and correct given attempted (None when undefined)."""
    if accuracy is None or correct_given_attempted is None or accuracy + correct_given_attempted == 0:
        return None
    return 2 * accuracy * correct_given_attempted / (accuracy + correct_given_attempted)


def penalised_score(correct: int, incorrect: int, asked: int, t: float) -> float | None:
    """Mean score per unit asked about: +1 right, -t/(1-t) wrong, 0 declined (None when nothing was asked)."""
    if not 0 <= t < 1:
        raise ValueError(f"confidence target must be in [0, 1), got {t}")
    if asked <= 0:
        return None
    return (correct - incorrect * t / (1 - t)) / asked


def _pairs(confidence: Sequence[float | None], correct: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    if len(confidence) != len(correct):
        raise ValueError("one confidence per outcome")
    kept = [(float(c), float(y)) for c, y in zip(confidence, correct) if c is not None]
    if not kept:
        return np.empty(0), np.empty(0)
    conf, right = np.array(kept).T
    if np.any((conf < 0) | (conf > 1)):
        raise ValueError("confidences must lie in [0, 1]")
    return conf, right


def expected_calibration_error(confidence: Sequence[float | None], correct: Sequence[int],
                               bins: int = ECE_BINS, *, debias: bool = True) -> float | None:
    """ECE: the bin-size-weighted mean |mean confidence - share right| over `bins` equal-width bins of
    [0, 1] (a confidence of exactly 1 falls in the last bin); units without a confidence are left out.

    The plug-in figure is biased upwards (a bin's share right is noisy, and |.| of noise is positive: with
    700 units of a calibrated target it reads about 0.035, not 0). With `debias` (the default) each bin's
    gap is debiased in its square, as Kumar, Liang and Ma (2019, "Verified uncertainty calibration") debias
    the squared calibration error: the squared plug-in gap less the binomial variance of the bin's share
    right, p(1 - p) / (n - 1), an unbiased estimate of the squared gap; the bin's gap is its square root
    (0 where the noise explains it all). Deterministic. The bootstrap debiasing it replaced left a
    calibrated target at 0.0218 on average against 0.0160 (experiments/knowledge_boundaries.py)."""
    conf, right = _pairs(confidence, correct)
    if conf.size == 0:
        return None
    index = np.minimum((conf * bins).astype(int), bins - 1)
    used = np.unique(index)
    sizes = np.array([(index == b).sum() for b in used], dtype=float)
    gaps = np.array([conf[index == b].mean() - right[index == b].mean() for b in used])
    if debias:
        share = np.array([right[index == b].mean() for b in used])
        noise = np.where(sizes > 1, share * (1 - share) / np.maximum(sizes - 1, 1), 0.0)
        gaps = np.sqrt(np.maximum(gaps**2 - noise, 0.0))
    return float((sizes * np.abs(gaps)).sum() / sizes.sum())


def reliability_bins(confidence: Sequence[float | None], correct: Sequence[int],
                     bins: int = ECE_BINS) -> list[tuple[float, float, int]]:
    """(mean confidence, share right, units) per non-empty bin: the points of a reliability diagram."""
    conf, right = _pairs(confidence, correct)
    index = np.minimum((conf * bins).astype(int), bins - 1)
    return [(float(conf[index == b].mean()), float(right[index == b].mean()), int((index == b).sum()))
            for b in np.unique(index)]


def brier_score(confidence: Sequence[float | None], correct: Sequence[int]) -> float | None:
    """Mean squared difference between the stated confidence and being right (0 best, 1 worst)."""
    conf, right = _pairs(confidence, correct)
    return float(np.mean((conf - right) ** 2)) if conf.size else None


def risk_coverage_area(confidence: Sequence[float | None], correct: Sequence[int]) -> float | None:
    """AURC: answer the most confident k units first; the mean over k = 1..n of the error rate among them.
    Lower is better; a confidence that ranks errors last gives the least. Ties are taken together (their
    mean risk), so the order within a tie does not flatter the figure."""
    conf, right = _pairs(confidence, correct)
    if conf.size == 0:
        return None
    order = np.argsort(-conf, kind="stable")
    conf, wrong = conf[order], 1.0 - right[order]
    # Within a run of equal confidences every unit gets the run's mean error, so ties are order-free.
    _, starts, counts = np.unique(-conf, return_index=True, return_counts=True)
    for start, count in zip(starts, counts):
        wrong[start:start + count] = wrong[start:start + count].mean()
    risks = np.cumsum(wrong) / np.arange(1, conf.size + 1)
    return float(risks.mean())


__all__ = ["ECE_BINS", "PENALTY_TARGETS", "brier_score", "expected_calibration_error", "penalised_score",
           "reliability_bins", "risk_coverage_area", "simpleqa_f"]
