"""95 % intervals for a judge's agreement figures: the share of verdicts that match the labels (Wilson)
and the correlations of its scores with people's (Fisher z).

Why: every exam figure is printed with its interval, while a judge's agreement was a bare number, so a
0.80 on 20 pairs read like a 0.80 on 2,000. These intervals treat the rows as independent (one label per
row); they use only the normal and t functions of examiner.stats.distributions, so a report loads no
scipy.stats to show them.

- Wilson score interval for a proportion (Wilson 1927), as statsmodels' proportion_confint(method="wilson").
- Fisher z for a correlation r on n pairs: tanh(atanh(r) -+ z * se), with se = 1 / sqrt(n - 3) for
  Pearson's r, sqrt(1.06 / (n - 3)) for Spearman's rho and sqrt(0.437 / (n - 4)) for Kendall's tau-b
  (Fieller, Hartley & Pearson 1957, "Tests for rank correlation coefficients. I", Biometrika 44:470).
  Undefined (nan) with too few pairs (4 for Pearson and Spearman, 5 for Kendall) or an undefined r.
"""

from __future__ import annotations

import math
from typing import Literal

from examiner.stats.distributions import norm_ppf

__all__ = ["CORRELATIONS", "LEVEL", "fisher_interval", "wilson_interval"]

LEVEL = 0.95
"""Confidence of the agreement intervals."""

CorrelationKind = Literal["pearson", "spearman", "kendall"]
CORRELATIONS: dict[str, tuple[float, int]] = {"pearson": (1.0, 3), "spearman": (1.06, 3), "kendall": (0.437, 4)}
"""Per coefficient: (variance factor, pairs subtracted) of the Fisher-z standard error sqrt(factor / (n - k))."""


def wilson_interval(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of successes / n; (nan, nan) when n is 0."""
    if n <= 0:
        return math.nan, math.nan
    z = norm_ppf(0.5 + level / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def fisher_interval(r: float | None, n: int | None, kind: CorrelationKind, level: float = LEVEL) -> tuple[float, float]:
    """The Fisher-z interval of a correlation r on n pairs (module docstring); (nan, nan) when undefined."""
    factor, lost = CORRELATIONS[kind]
    if r is None or n is None or not math.isfinite(r) or n - lost < 1:
        return math.nan, math.nan
    if abs(r) >= 1:
        return (r, r)  # a perfect correlation has no spread for z to measure
    z = norm_ppf(0.5 + level / 2)
    centre, se = math.atanh(r), math.sqrt(factor / (n - lost))
    return math.tanh(centre - z * se), math.tanh(centre + z * se)
