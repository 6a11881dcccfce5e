"""PPI++ for a ratio of two means: the hallucination rate (incorrect among attempted units) calibrated by a
random sample of human labels, as examiner/stats/ppi.py calibrates a mean.

Why apart from ppi_mean: the hallucination rate's denominator (attempted units) is itself a label, so a
person who relabels an `incorrect` unit `abstained` moves the denominator too; a mean of 0/1 labels over a
fixed population cannot say that. The ratio theta = E[I] / E[A] (I: the unit is incorrect, A: attempted,
correct or incorrect) is the root of the estimating equation E[I - theta A] = 0, and PPI++ for such an
M-estimator (Angelopoulos, Duchi & Zrnic 2023, section 3) rectifies the equation with the judge's labels:
for a fixed lambda
  mean_h(I - theta A) + lambda (mean_g(I - theta A) - mean_f(I - theta A)) = 0,
which is linear in theta, so theta = (PPI++ mean of I) / (PPI++ mean of A) with the same lambda. Its
standard error is the delta method's: the standard error of the rectified mean of z = I - theta A (the
ppi_mean variance: labelled part plus lambda^2 x the unlabelled part) over the PPI++ mean of A. lambda is
power-tuned on z at the judge's own ratio (Cov(z_h, z_f) / ((1 + n/N) Var(z_f)), clipped to [0, 1]).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from examiner.stats.distributions import norm_ppf
from examiner.stats.ppi import MeanEstimate, check_ppi_sizes

Pairs = Sequence[tuple[int, int]]
"""(numerator, denominator) 0/1 labels per unit: (incorrect, attempted) for the hallucination rate."""


def _arrays(pairs: Pairs) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(pairs, dtype=float).reshape(-1, 2)
    return a[:, 0], a[:, 1]


def ppi_ratio(human: Pairs, judge_labelled: Pairs, judge_unlabelled: Pairs, *,
              level: float = 0.95) -> tuple[MeanEstimate, float]:
    """PPI++ estimate of E[num] / E[den] from people's (num, den) labels and the judge's on the same n units,
    plus the judge's on N other units; the estimate (interval clipped to [0, 1]) and the lambda used.
    ValueError when fewer than two units are labelled, no unit is unlabelled, or no unit counts in the
    denominator."""
    yn, yd = _arrays(human)
    fn, fd = _arrays(judge_labelled)
    gn, gd = _arrays(judge_unlabelled)
    n, big_n = yn.size, gn.size
    check_ppi_sizes(n, fn.size, big_n)
    judge_den = fd.sum() + gd.sum()
    if judge_den == 0 or yd.sum() == 0:
        raise ValueError("no unit counts in the ratio's denominator (nothing attempted)")
    start = float((fn.sum() + gn.sum()) / judge_den)
    zy, zf, zg = yn - start * yd, fn - start * fd, gn - start * gd
    var_f = float(np.var(np.concatenate([zf, zg]), ddof=1))
    scale = (1 + n / big_n) * var_f
    lam = 0.0 if scale == 0 else float(np.clip(float(np.cov(zy, zf, ddof=1)[0, 1]) / scale, 0.0, 1.0))
    numerator = float(yn.mean() + lam * (gn.mean() - fn.mean()))
    denominator = float(yd.mean() + lam * (gd.mean() - fd.mean()))
    if denominator <= 0:
        raise ValueError("the calibrated share of attempted units is not above 0")
    theta = numerator / denominator
    rectifier = (yn - theta * yd) - lam * (fn - theta * fd)
    unlabelled = gn - theta * gd
    variance = float(np.var(rectifier, ddof=1)) / n
    if big_n > 1:
        variance += lam**2 * float(np.var(unlabelled, ddof=1)) / big_n
    se = math.sqrt(variance) / denominator
    half = norm_ppf(0.5 + level / 2) * se
    method = ("PPI++ ratio (power-tuned lambda, delta method)" if lam not in (0.0, 1.0)
              else "human only (ratio, delta method)" if lam == 0 else "PPI ratio (delta method)")
    return MeanEstimate(theta, max(0.0, theta - half), min(1.0, theta + half), level, se, n, big_n, method), lam


__all__ = ["ppi_ratio"]
