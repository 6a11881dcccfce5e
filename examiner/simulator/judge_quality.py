"""Simulated judges of set quality: how often they agree with a reference judge, and how well their
confidence says when.

Why: a cascade's guarantee (examiner.stats.cascade) must be checked against judges whose quality is
known, including judges whose confidence misleads. Each unit gets a latent chance `p` that the judge
agrees with the reference, drawn from a Beta distribution whose mean is the judge's raw agreement; the
judge agrees with that chance, and otherwise gives another label. What it reports as confidence depends
on its calibration:

- `calibrated`: the confidence is `p` itself (the chance it agrees, as a log-probability would say);
- `overconfident`: a noisy, squeezed copy of `p` in [0.9, 1): it ranks units only partly by `p` and
  always claims to be sure;
- `uninformative`: confidence unrelated to `p`;
- `samples`: k sampled verdicts; the verdict is their majority and the confidence the majority's share
  (what a cascade falls back to when an endpoint gives no log-probabilities).

All draws come from the caller's `numpy.random.Generator`, so a repetition is reproducible from its seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Calibration = Literal["calibrated", "overconfident", "uninformative", "samples"]
CALIBRATIONS: tuple[Calibration, ...] = ("calibrated", "overconfident", "uninformative", "samples")

__all__ = ["CALIBRATIONS", "Calibration", "JudgeQuality", "SimulatedVerdicts", "simulate_judge"]


@dataclass(frozen=True)
class JudgeQuality:
    """A simulated judge: its raw agreement with the reference and how its confidence behaves."""

    agreement: float
    calibration: Calibration = "calibrated"
    concentration: float = 4.0
    """Beta concentration of the per-unit agreement chance (lower: easier and harder units differ more)."""
    samples: int = 5
    """Verdicts sampled per unit under `samples` calibration."""


@dataclass(frozen=True)
class SimulatedVerdicts:
    labels: np.ndarray
    confidences: np.ndarray
    agrees: np.ndarray
    """Whether each label equals the reference label."""


def _other(reference: np.ndarray, n_labels: int, rng: np.random.Generator) -> np.ndarray:
    shift = rng.integers(1, n_labels, size=reference.shape)
    return (reference + shift) % n_labels


def simulate_judge(reference: Sequence[int] | np.ndarray, quality: JudgeQuality, n_labels: int,
                   rng: np.random.Generator) -> SimulatedVerdicts:
    """The judge's labels (ints in [0, n_labels)) and confidences on units whose reference labels are given."""
    if not 0 < quality.agreement < 1:
        raise ValueError(f"agreement must lie in (0, 1), got {quality.agreement}")
    if n_labels < 2:
        raise ValueError("a judge needs at least two labels to choose from")
    ref = np.asarray(reference, dtype=int)
    a = quality.agreement * quality.concentration
    b = (1 - quality.agreement) * quality.concentration
    chance = rng.beta(a, b, size=ref.shape)
    if quality.calibration == "samples":
        k = quality.samples
        agree_draws = rng.random((k, *ref.shape)) < chance
        others = np.stack([_other(ref, n_labels, rng) for _ in range(k)])
        draws = np.where(agree_draws, ref, others)
        counts = np.stack([(draws == label).sum(axis=0) for label in range(n_labels)])
        labels = counts.argmax(axis=0)
        confidences = counts.max(axis=0) / k
        return SimulatedVerdicts(labels, confidences.astype(float), labels == ref)
    agrees = rng.random(ref.shape) < chance
    labels = np.where(agrees, ref, _other(ref, n_labels, rng))
    if quality.calibration == "calibrated":
        confidences = chance
    elif quality.calibration == "overconfident":
        noisy = 0.4 * chance + 0.6 * rng.random(ref.shape)
        confidences = 0.9 + 0.0999 * noisy
    elif quality.calibration == "uninformative":
        confidences = rng.random(ref.shape)
    else:
        raise ValueError(f"unknown calibration {quality.calibration!r}; choose from {', '.join(CALIBRATIONS)}")
    return SimulatedVerdicts(labels, np.asarray(confidences, dtype=float), agrees)
