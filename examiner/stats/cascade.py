"""Cascaded judging with a guarantee: when may a cheap judge's verdict stand, and when must it escalate?

Why: a strong judge on every unit is the largest line of an exam's bill, while a cheap judge agrees with
it most of the time. "Trust or Escalate" (Jung, Brahman & Choi, ICLR 2025) keeps the cheap verdict only
where the cheap judge is confident enough, with the confidence threshold chosen on a labelled random
sample so that, with probability at least 1 - risk over that sample, the cheap judge's agreement RATE with
the reference (the strong judge, or people) on the units it keeps is at least `target_agreement`: a
risk-controlled rate, the expected agreement over the population the sample was drawn from. The realised
share on one exam's kept units scatters around that rate and falls below `target_agreement` more often
than `risk` (experiments/judge_cascade.py measures both; docs/CASCADE.md).

The threshold comes from fixed-sequence testing (Bauer 1991; the Learn-then-Test framing of Angelopoulos
et al. 2021). Candidate thresholds are tested from the most confident down; at each one the null
hypothesis "disagreement among the kept units exceeds alpha = 1 - target_agreement" is tested with the
exact binomial tail: p = P(Binomial(n_kept, alpha) <= disagreements among the calibration units kept).
Testing stops at the first threshold whose p-value exceeds the risk; the lowest threshold rejected before
that is used. Because the thresholds are tested in a fixed order, each at level `risk`, the family-wise
error is at most `risk` and no multiplicity correction is needed. The guarantee holds for any confidence
score, calibrated or not: an uninformative or overconfident score only makes the procedure keep fewer
units (it escalates more), it never makes it keep a worse set.

What it does not promise: the guarantee is over the draw of the calibration sample, for units drawn from
the same population (the same exam); it says nothing about a corpus unlike the calibration units, and it
bounds the rate, not the share realised on any finite set of kept units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from examiner.stats.distributions import binom_cdf

__all__ = ["ThresholdTest", "CascadeThreshold", "calibrate_threshold", "candidate_thresholds", "min_testable", "route"]



def min_testable(target_agreement: float, risk: float) -> int:
    """The fewest kept units whose test can reject at all: with no disagreement among n kept units the
    p-value is target_agreement^n, which must reach `risk`. Thresholds keeping fewer are skipped rather
    than tested (a test that cannot reject would stop the sequence before it starts); which thresholds are
    skipped depends on the confidences alone, never on the agreement labels."""
    return max(1, int(np.ceil(np.log(risk) / np.log(target_agreement) - 1e-12)))


@dataclass(frozen=True)
class ThresholdTest:
    """One step of the fixed sequence: the threshold, the calibration units it keeps, and the test."""

    threshold: float
    kept: int
    disagreements: int
    p_value: float
    rejected: bool
    """Whether "disagreement above alpha" was rejected at level `risk` (the threshold is safe)."""


@dataclass(frozen=True)
class CascadeThreshold:
    """The calibrated threshold of one cascade tier and the evidence for it."""

    threshold: float
    """Keep the tier's verdict when its confidence is >= this; `inf` when no threshold passed (escalate all)."""
    target_agreement: float
    risk: float
    calibration_size: int
    kept_in_calibration: int
    agreement_in_calibration: float | None
    """Measured agreement on the calibration units the threshold keeps (None when it keeps none)."""
    steps: tuple[ThresholdTest, ...] = field(default=(), repr=False)

    @property
    def keeps_any(self) -> bool:
        return bool(np.isfinite(self.threshold))


def candidate_thresholds(confidences: Sequence[float], max_candidates: int = 200) -> list[float]:
    """Thresholds to test, from the most confident down: the distinct calibration confidences (thinned to
    `max_candidates` quantiles when there are more, so each step keeps a few more units)."""
    values = np.unique(np.asarray(confidences, dtype=float))[::-1]
    if len(values) > max_candidates:
        picks = np.linspace(0, len(values) - 1, max_candidates).round().astype(int)
        values = values[np.unique(picks)]
    return [float(v) for v in values]


def calibrate_threshold(confidences: Sequence[float], agrees: Sequence[bool], *, target_agreement: float,
                        risk: float, thresholds: Sequence[float] | None = None) -> CascadeThreshold:
    """The lowest confidence threshold whose kept calibration units show, by fixed-sequence testing at
    level `risk`, an agreement rate (over the population above the threshold) of at least `target_agreement`.

    `confidences[i]` is the cheap judge's confidence on calibration unit i, `agrees[i]` whether its verdict
    matched the reference's. The units must be a random sample of the units the cascade will judge."""
    if not 0 < target_agreement < 1:
        raise ValueError(f"target_agreement must lie in (0, 1), got {target_agreement}")
    if not 0 < risk < 1:
        raise ValueError(f"risk must lie in (0, 1), got {risk}")
    conf = np.asarray(confidences, dtype=float)
    agree = np.asarray(agrees, dtype=bool)
    if conf.shape != agree.shape:
        raise ValueError("confidences and agrees must have the same length")
    alpha = 1.0 - target_agreement
    order = thresholds if thresholds is not None else candidate_thresholds(conf)
    floor = min_testable(target_agreement, risk)
    steps: list[ThresholdTest] = []
    chosen = float("inf")
    for threshold in sorted(order, reverse=True):
        kept = conf >= threshold
        n_kept = int(kept.sum())
        if n_kept < floor:
            continue
        wrong = int((~agree[kept]).sum())
        p_value = binom_cdf(wrong, n_kept, alpha)
        rejected = p_value <= risk
        steps.append(ThresholdTest(float(threshold), n_kept, wrong, p_value, rejected))
        if not rejected:
            break
        chosen = float(threshold)
    kept_mask = conf >= chosen
    n_kept = int(kept_mask.sum())
    return CascadeThreshold(
        threshold=chosen, target_agreement=target_agreement, risk=risk, calibration_size=int(conf.size),
        kept_in_calibration=n_kept,
        agreement_in_calibration=float(agree[kept_mask].mean()) if n_kept else None,
        steps=tuple(steps))


def route(confidences: Sequence[float], threshold: CascadeThreshold) -> np.ndarray:
    """Which units the tier keeps (True) and which it escalates (False)."""
    return np.asarray(confidences, dtype=float) >= threshold.threshold
