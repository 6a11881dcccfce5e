"""Power and sample-size plans for exams whose units are clustered by source document.

Why: "is B better than A?" can only be answered when the exam is large enough to see the difference.
From a pilot (one small exam, or an earlier run) this module measures what the variance depends on (the
per-unit variance, the intraclass correlation of verdicts within documents and within exam clusters, the
units per document) and turns it into the units, documents and dollars an exam needs to detect a
difference d with 80 % power, or to pin a figure to an interval half-width w; and, for an exam already
run, the minimum detectable effect and the power it had.

The variance model is the design-effect one (Kish 1965; Donner & Klar 2000): a mean over N units in
documents of m units has variance sigma^2 / N x (1 + (m - 1) rho), where sigma^2 is the per-unit variance
and rho the intraclass correlation within documents. Tests are referred to a t distribution on
(documents - 1) degrees of freedom, so the power is a noncentral-t probability (normal for many documents).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from examiner.stats.clusters import grouping, icc_anova, ratio_residuals, robust_variance, totals_by
from examiner.stats.correlation import Figures
from examiner.stats.distributions import nct_cdf, nct_sf, norm_cdf, norm_ppf, norm_sf, t_ppf

__all__ = [
    "Design",
    "Plan",
    "power_at",
    "minimum_detectable_effect",
    "design_from_pilot",
    "predicted_power",
    "plan",
]

Outcome = int | bool | None


def _critical(alpha: float, df: float | None, sides: int) -> float:
    q = 1 - alpha / sides
    return norm_ppf(q) if df is None else t_ppf(q, df)


def power_at(effect: float, standard_error: float, alpha: float = 0.05, df: float | None = None, sides: int = 2) -> float:
    """Probability that a test at level `alpha` rejects when the true difference is `effect` and the
    estimate's standard error is `standard_error`: normal reference when df is None, else noncentral t on
    df degrees of freedom. sides=1 is the one-sided test in the direction of `effect`."""
    if standard_error <= 0 or not math.isfinite(standard_error):
        return float("nan")
    ncp = abs(effect) / standard_error
    crit = _critical(alpha, df, sides)
    if df is None:
        upper = norm_sf(crit - ncp)
        lower = norm_cdf(-crit - ncp) if sides == 2 else 0.0
    else:
        upper = nct_sf(crit, df, ncp)
        lower = nct_cdf(-crit, df, ncp) if sides == 2 else 0.0
        if math.isnan(upper + lower):  # scipy's noncentral t gives up far in the tail, where power is ~1
            return 1.0
    return min(1.0, upper + lower)


def minimum_detectable_effect(
    standard_error: float, alpha: float = 0.05, power: float = 0.8, df: float | None = None, sides: int = 2
) -> float:
    """The smallest true difference a test at level `alpha` detects with probability `power`, given the
    estimate's standard error (solves power_at(effect) = power)."""
    if standard_error <= 0 or not math.isfinite(standard_error):
        return float("nan")
    guess = (_critical(alpha, df, sides) + norm_ppf(power)) * standard_error
    if df is None:
        return guess
    high = guess
    while power_at(high, standard_error, alpha, df, sides) < power:
        high *= 2
    return float(brentq(lambda e: power_at(e, standard_error, alpha, df, sides) - power, 1e-12, high))


@dataclass(frozen=True)
class Design(Figures):
    """What a pilot says about a figure's variance. `unit_variance` is one unit's variance (p(1 - p) for an
    accuracy; the variance of B_j - A_j for a paired difference), `icc_documents` / `icc_clusters` the
    intraclass correlations of that quantity within documents / exam clusters, `units_per_document` the
    pilot's mean document size, and `design_effect` the pilot's measured variance inflation (cluster-robust
    variance over the independent-units one)."""

    quantity: str
    estimate: float
    unit_variance: float
    icc_documents: float
    icc_clusters: float
    units_per_document: float
    design_effect: float
    n_units: int
    n_documents: int

    def standard_error(self, n_units: float, units_per_document: float | None = None) -> float:
        """Standard error of the figure over n_units units in documents of `units_per_document` units
        (the pilot's size by default): sqrt(sigma^2 / N x (1 + (m - 1) rho))."""
        m = self.units_per_document if units_per_document is None else units_per_document
        rho = 0.0 if math.isnan(self.icc_documents) else self.icc_documents
        return math.sqrt(self.unit_variance / n_units * (1 + (m - 1) * rho))


@dataclass(frozen=True)
class Plan(Figures):
    """Units, documents and dollars for a goal: detect `detect` with `power` at `alpha`, or reach an
    interval half-width `half_width` at `level`."""

    goal: str
    detect: float | None
    half_width: float | None
    power: float | None
    alpha: float
    units: int
    documents: int
    units_per_document: float
    design_effect: float
    dollars: float | None


def _clean(outcomes: Sequence[Outcome]) -> np.ndarray:
    return np.array([np.nan if o is None else float(o) for o in outcomes])


def design_from_pilot(
    outcomes_a: Sequence[Outcome],
    documents: Sequence[Hashable],
    clusters: Sequence[Hashable] | None = None,
    outcomes_b: Sequence[Outcome] | None = None,
) -> Design:
    """Measure a pilot: for one target, its accuracy over covered units; with `outcomes_b`, the paired
    difference B - A over units both covered. Outcomes are 1 (correct), 0 (incorrect) or None (not
    covered: left out)."""
    a = _clean(outcomes_a)
    if outcomes_b is None:
        value, quantity = a, "accuracy"
    else:
        b = _clean(outcomes_b)
        if b.size != a.size:
            raise ValueError("outcomes_a and outcomes_b must name the same units")
        value, quantity = b - a, "paired difference"
    keep = ~np.isnan(value)
    if not keep.any():
        raise ValueError("the pilot has no covered units")
    docs = [d for d, k in zip(documents, keep) if k]
    clus = None if clusters is None else [c for c, k in zip(clusters, keep) if k]
    g = grouping(docs, clus)
    v = value[keep]
    unit_variance = float(np.var(v))
    per_doc = totals_by(g.document, g.n_documents, np.column_stack([v, np.ones_like(v)]))
    srs = unit_variance / v.size
    cluster_var = robust_variance(ratio_residuals(per_doc[:, 0], per_doc[:, 1]))
    deff = cluster_var / srs if srs > 0 else 1.0
    icc_clusters = icc_anova(v, g.cluster) if clus is not None else float("nan")
    return Design(
        quantity=quantity,
        estimate=float(v.mean()),
        unit_variance=unit_variance,
        icc_documents=icc_anova(v, g.document),
        icc_clusters=icc_clusters,
        units_per_document=v.size / g.n_documents,
        design_effect=float(deff),
        n_units=int(v.size),
        n_documents=g.n_documents,
    )


def predicted_power(
    design: Design, effect: float, n_documents: int, units_per_document: float | None = None, alpha: float = 0.05
) -> float:
    """Power of the two-sided cluster test (t on documents - 1 df) to detect `effect` in an exam of
    n_documents documents of `units_per_document` units (the pilot's size by default)."""
    m = design.units_per_document if units_per_document is None else units_per_document
    se = design.standard_error(n_documents * m, m)
    return power_at(effect, se, alpha, df=max(n_documents - 1, 1))


def plan(
    design: Design,
    *,
    detect: float | None = None,
    half_width: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    units_per_document: float | None = None,
    cost_per_unit: float | None = None,
) -> Plan:
    """Units (and documents, and dollars given a cost per unit) needed to detect a difference `detect`
    with `power` (two-sided test at `alpha`), or to reach a (1 - alpha) interval of half-width
    `half_width`. Exactly one goal. Solved with the normal approximation, then the documents' t
    reference is applied and the count raised to the fewest documents that meet the t-based power (or
    half-width)."""
    if (detect is None) == (half_width is None):
        raise ValueError("give exactly one goal: detect=... or half_width=...")
    goal_size = detect if detect is not None else half_width
    assert goal_size is not None
    if goal_size <= 0:
        raise ValueError("the difference or half-width must be positive")
    if not design.unit_variance > 0:
        raise ValueError("the pilot's values do not vary: there is no variance to plan from")
    m = design.units_per_document if units_per_document is None else units_per_document
    rho = 0.0 if math.isnan(design.icc_documents) else design.icc_documents
    deff = 1 + (m - 1) * rho
    z_alpha = norm_ppf(1 - alpha / 2)
    multiplier = z_alpha + norm_ppf(power) if detect is not None else z_alpha
    documents = max(2, math.ceil(multiplier**2 * design.unit_variance * deff / goal_size**2 / m))

    def met(docs: int) -> bool:
        se = design.standard_error(docs * m, m)
        if detect is not None:
            return power_at(detect, se, alpha, df=docs - 1) >= power
        return _critical(alpha, docs - 1, 2) * se <= goal_size

    if not met(documents):  # the t reference asks for more: find the fewest documents that meet the goal
        low, step = documents, 1
        while not met(documents + step):
            low, step = documents + step, step * 2
        high = documents + step
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if met(middle) else (middle, high)
        documents = high
    units = math.ceil(documents * m)
    return Plan(
        goal="detect" if detect is not None else "half_width",
        detect=detect,
        half_width=half_width,
        power=power if detect is not None else None,
        alpha=alpha,
        units=units,
        documents=documents,
        units_per_document=float(m),
        design_effect=float(deff),
        dollars=None if cost_per_unit is None else units * cost_per_unit,
    )
