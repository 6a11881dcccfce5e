"""Intervals for clustered verdicts, honest at every sample size.

Why: a percentile cluster bootstrap cannot see variation it never draws: with 8 units in 2 clusters
whose accuracies happen to agree it returns 0.750 [0.750, 0.750], and at 30-40 documents its interval of
a paired difference covered only 0.933-0.938 (issue 40). The intervals here are one family at every size,
so that nothing jumps at a threshold and interval, test and gate agree:

- one accuracy: the Wilson score interval on the effective sample size n / design effect, with that size
  shrunk by (z / t_{G-1})^2 so the interval has the width a t reference on G - 1 degrees of freedom would
  give (Korn & Graubard 1998, there for Clopper-Pearson; Wilson here, which is never zero-width);
- a paired difference: estimate +- t_{G-1} x a standard error that is the largest of the cluster-robust
  one, the independent-units one and the one implied by an exact interval of the units' 2 x 2 table
  (`exact_paired_bounds`: Clopper-Pearson bounds of the two discordant shares combined by MOVER), so the
  interval always holds the exact one: a table without discordant units gets -0.0085 at one-sided 95 %
  on 352 units, never a zero-width interval.

`small_sample` still says when there are fewer than SMALL_SAMPLE_GROUPS groups: the t reference then has
few degrees of freedom and the figures are rough, though the interval's coverage holds
(experiments/stats_calibration.py measures it by number of documents).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from examiner.stats.clusters import grouping, ratio_residuals, robust_variance, totals_by
from examiner.stats.correlation import Figures
from examiner.stats.distributions import beta_ppf, norm_ppf, t_ppf

__all__ = [
    "SMALL_SAMPLE_GROUPS",
    "Estimate",
    "is_small_sample",
    "wilson_design_effect",
    "t_interval",
    "clopper_pearson",
    "exact_paired_bounds",
    "PairedInterval",
    "paired_interval",
    "accuracy_interval",
]

SMALL_SAMPLE_GROUPS = 30
"""Below this many independent groups (documents) a report flags its figures as a small sample: the
interval is the same family at every size, but its t reference then has few degrees of freedom."""

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
    """True when there are fewer than SMALL_SAMPLE_GROUPS independent groups (a rough figure, flagged)."""
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


def clopper_pearson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson 1934) two-sided interval of successes / n: 0 and 1 at the ends, never
    zero-width; (nan, nan) when n is 0."""
    if n <= 0:
        return math.nan, math.nan
    tail = (1 - level) / 2
    low = 0.0 if successes <= 0 else beta_ppf(tail, successes, n - successes + 1)
    high = 1.0 if successes >= n else beta_ppf(1 - tail, successes + 1, n - successes)
    return low, high


def exact_paired_bounds(a_only: int, b_only: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Interval of the paired difference (b_only - a_only) / n for n independent units: the
    Clopper-Pearson bounds of the two discordant shares combined by MOVER (Zou & Donner 2008; Newcombe
    1998 does the same with Wilson bounds), with the negative correlation of two multinomial shares.
    With no discordant unit it is [-(1 - (alpha/2)^(1/n)), +(1 - (alpha/2)^(1/n))]: the exact bound of a
    share seen 0 times. (nan, nan) when n is 0."""
    if n <= 0:
        return math.nan, math.nan
    p_a, p_b = a_only / n, b_only / n
    low_a, high_a = clopper_pearson(a_only, n, level)
    low_b, high_b = clopper_pearson(b_only, n, level)
    inside = 0 < p_a < 1 and 0 < p_b < 1
    corr = -math.sqrt(p_a * p_b / ((1 - p_a) * (1 - p_b))) if inside else 0.0
    d = p_b - p_a
    down_b, up_a = p_b - low_b, high_a - p_a
    up_b, down_a = high_b - p_b, p_a - low_a
    low = d - math.sqrt(max(down_b**2 + up_a**2 - 2 * corr * down_b * up_a, 0.0))
    high = d + math.sqrt(max(up_b**2 + down_a**2 - 2 * corr * up_b * down_a, 0.0))
    return max(low, -1.0), min(high, 1.0)


@dataclass(frozen=True)
class PairedInterval:
    """A paired difference's interval and the standard error behind it: low, high = estimate +-
    t_{df} x standard_error, so a t test on the same standard error rejects exactly when 0 is outside."""

    low: float
    high: float
    standard_error: float
    df: int


def paired_interval(
    estimate: float,
    cluster_variance: float,
    unit_variance: float,
    a_only: int,
    b_only: int,
    n: int,
    n_groups: int,
    level: float = 0.95,
) -> PairedInterval:
    """estimate +- t_{G-1} x SE at every number of groups, SE the largest of the cluster-robust standard
    error, the independent-units one, and the one that makes the interval hold `exact_paired_bounds` of
    the units' discordant counts (a_only, b_only of n): clustering never makes a difference look more
    precise than independent units would, and no sample gets a zero-width interval while it has units.
    The ends are clipped to [-1, 1]; nan when the estimate is."""
    df = max(n_groups - 1, 1)
    t = _t(level, n_groups - 1)
    exact_low, exact_high = exact_paired_bounds(a_only, b_only, n, level)
    exact_se = max(estimate - exact_low, exact_high - estimate) / t if n > 0 and math.isfinite(estimate) else 0.0
    se = math.sqrt(max(cluster_variance, unit_variance, exact_se**2, 0.0))
    if not math.isfinite(estimate):
        return PairedInterval(math.nan, math.nan, se, df)
    low, high = t_interval(estimate, se, n_groups - 1, level)
    return PairedInterval(max(low, -1.0), min(high, 1.0), se, df)


def accuracy_interval(
    outcomes: Sequence[Outcome],
    documents: Sequence[Hashable],
    clusters: Sequence[Hashable] | None = None,
    *,
    level: float = 0.95,
) -> Estimate:
    """Accuracy = correct / covered (None = not covered) with its interval: the Wilson interval with
    design effect and t on groups - 1 df (`wilson_design_effect`) at every number of groups, so nothing
    jumps at SMALL_SAMPLE_GROUPS (the percentile cluster bootstrap it replaced above 30 documents covered
    0.93-0.94 at 30-40; experiments/stats_calibration.py). Never zero-width while units are covered."""
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
    if n == 0:
        low = high = float("nan")
        method = "no covered units"
    else:
        deff = variance / srs if srs > 0 else 1.0
        low, high = wilson_design_effect(y, n, deff, g.n_documents, level)
        method = f"Wilson with design effect, t on {g.top_stage} - 1 df"
    return Estimate(
        estimate=p,
        low=low,
        high=high,
        level=level,
        standard_error=math.sqrt(max(variance, srs if srs == srs else 0.0)),
        method=method,
        small_sample=is_small_sample(g.n_documents),
        n_units=int(n),
        n_groups=g.n_documents,
    )
