"""Intervals for clustered verdicts, honest at every sample size.

Why: a percentile cluster bootstrap is right when there are many documents, but with a handful it cannot
see variation it never draws: with 8 units in 2 clusters whose accuracies happen to agree it returns
0.750 [0.750, 0.750]. Below `SMALL_SAMPLE_GROUPS` independent groups (documents, or exam clusters when
there is one document) the interval switches to a method whose coverage holds there (checked by
experiments/stats_calibration.py) and says so with `small_sample=True`:

- one accuracy: the Wilson score interval on the effective sample size n / design effect, with that size
  shrunk by (z / t_{G-1})^2 so the interval has the width a t reference on G - 1 degrees of freedom would
  give (Korn & Graubard 1998, there for Clopper-Pearson; Wilson here, which is never zero-width);
- a paired difference: estimate +- t_{G-1} x the larger of the cluster-robust standard error and the
  Agresti-Min (2005) standard error of the units' 2 x 2 table (a half added to each cell), so neither a
  lucky agreement between clusters nor a table without discordant units gives a zero-width interval.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from examiner.stats.clusters import bootstrap_totals, grouping, ratio_residuals, robust_variance, totals_by
from examiner.stats.correlation import Figures, percentile_interval
from examiner.stats.distributions import norm_ppf, t_ppf

__all__ = [
    "SMALL_SAMPLE_GROUPS",
    "Estimate",
    "is_small_sample",
    "wilson_design_effect",
    "t_interval",
    "agresti_min_variance",
    "accuracy_interval",
]

SMALL_SAMPLE_GROUPS = 30
"""Below this many independent groups (documents) the percentile cluster bootstrap under-covers: its 95 %
interval of a paired difference covered 0.88 at 10 documents, 0.92 at 15 and 0.93 at 20, against 0.95 for
the small-sample interval at 10 (experiments/stats_calibration.py, ICC 0.7), so intervals switch there."""

Outcome = int | bool | None


@dataclass(frozen=True)
class Estimate(Figures):
    """A figure with its interval, the standard error behind it, how the interval was made, and over what."""

    estimate: float
    low: float
    high: float
    level: float
    standard_error: float
    method: str
    small_sample: bool
    n_units: int
    n_groups: int


def is_small_sample(n_groups: int) -> bool:
    """True when there are too few independent groups for the percentile cluster bootstrap."""
    return n_groups < SMALL_SAMPLE_GROUPS


def _t(level: float, df: int) -> float:
    return t_ppf(0.5 + level / 2, max(df, 1))


def wilson_design_effect(
    successes: float, n: float, design_effect: float, n_groups: int, level: float = 0.95
) -> tuple[float, float]:
    """Wilson interval for a clustered proportion: effective size n / design_effect (the effect floored at
    1), then shrunk by (z / t_{G-1})^2 for the few groups the variance was estimated from."""
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    z = norm_ppf(0.5 + level / 2)
    n_eff = n / max(design_effect, 1.0) * (z / _t(level, n_groups - 1)) ** 2
    denominator = 1 + z * z / n_eff
    centre = (p + z * z / (2 * n_eff)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff))
    # At p = 0 (or 1) the Wilson bound is 0 (1) exactly; rounding would leave it a hair inside, above the estimate.
    return (0.0 if p <= 0 else max(0.0, centre - half)), (1.0 if p >= 1 else min(1.0, centre + half))


def t_interval(estimate: float, standard_error: float, df: int, level: float = 0.95) -> tuple[float, float]:
    """estimate +- t_{df} x standard_error (df at least 1)."""
    half = _t(level, df) * standard_error
    return estimate - half, estimate + half


def agresti_min_variance(a_only: int, b_only: int, n: int) -> float:
    """Variance of a paired difference of proportions from the 2 x 2 table with a half added to each cell
    (Agresti & Min 2005): positive even when no unit is discordant."""
    b, c, total = a_only + 0.5, b_only + 0.5, n + 2.0
    return float(((b + c) - (b - c) ** 2 / total) / total**2)


def accuracy_interval(
    outcomes: Sequence[Outcome],
    documents: Sequence[Hashable],
    clusters: Sequence[Hashable] | None = None,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    two_stage: bool = False,
) -> Estimate:
    """Accuracy = correct / covered (None = not covered) with its interval: the percentile cluster
    bootstrap over documents when there are at least SMALL_SAMPLE_GROUPS of them, else the Wilson interval
    with design effect. Zero-width only when the data leave nothing to vary (every covered unit alike and
    one group)."""
    if len(outcomes) != len(documents):
        raise ValueError("one outcome per document id")
    correct = np.array([0.0 if o is None else float(o) for o in outcomes])
    covered = np.array([0.0 if o is None else 1.0 for o in outcomes])
    g = grouping(documents, clusters)
    per_doc = totals_by(g.document, g.n_documents, np.column_stack([correct, covered]))
    n, y = float(covered.sum()), float(correct.sum())
    p = y / n if n else float("nan")
    variance = robust_variance(ratio_residuals(per_doc[:, 0], per_doc[:, 1]))
    srs = p * (1 - p) / n if n else float("nan")
    small = is_small_sample(g.n_documents)
    if n == 0:
        low = high = float("nan")
        method = "no covered units"
    elif small:
        deff = variance / srs if srs > 0 else 1.0
        low, high = wilson_design_effect(y, n, deff, g.n_documents, level)
        method = "Wilson with design effect, t on groups - 1 df"
    else:
        boot = bootstrap_totals(g, np.column_stack([correct, covered]), n_resamples, seed, two_stage=two_stage)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = boot[:, 0] / boot[:, 1]
        low, high = (float(v) for v in percentile_interval(draws[np.isfinite(draws)], 1 - level))
        method = "cluster bootstrap (percentile, " + ("two-stage)" if two_stage else f"{g.top_stage})")
    return Estimate(
        estimate=p,
        low=low,
        high=high,
        level=level,
        standard_error=math.sqrt(max(variance, srs if srs == srs else 0.0)),
        method=method,
        small_sample=small,
        n_units=int(n),
        n_groups=g.n_documents,
    )
