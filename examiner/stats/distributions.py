"""The few distribution functions the exam statistics need (normal, Student t, noncentral t, binomial),
taken from scipy.special: the same routines scipy.stats calls, without importing scipy.stats and its
hundred distributions (about half a second at every start of `examiner gate` or `examiner compare`).
"""

from __future__ import annotations

import math

from scipy import special

__all__ = ["beta_ppf", "binom_cdf", "norm_cdf", "norm_ppf", "norm_sf", "nct_cdf", "nct_sf", "t_ppf", "t_sf"]


def norm_cdf(x: float) -> float:
    """P(Z <= x) for a standard normal Z."""
    return float(special.ndtr(x))


def norm_sf(x: float) -> float:
    """P(Z > x) for a standard normal Z."""
    return float(special.ndtr(-x))


def norm_ppf(q: float) -> float:
    """The q quantile of the standard normal."""
    return float(special.ndtri(q))


def t_sf(x: float, df: float) -> float:
    """P(T > x) for Student's t on df degrees of freedom."""
    return float(special.stdtr(df, -x))


def t_ppf(q: float, df: float) -> float:
    """The q quantile of Student's t on df degrees of freedom."""
    return float(special.stdtrit(df, q))


def nct_cdf(x: float, df: float, nc: float) -> float:
    """P(T <= x) for the noncentral t (df degrees of freedom, noncentrality nc)."""
    return float(special.nctdtr(df, nc, x))


def nct_sf(x: float, df: float, nc: float) -> float:
    """P(T > x) for the noncentral t; nan where scipy's routine gives up (far in the tail)."""
    cdf = nct_cdf(x, df, nc)
    return math.nan if math.isnan(cdf) else min(1.0, max(0.0, 1.0 - cdf))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    return float(special.bdtr(k, n, p))


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q quantile of the Beta(a, b) distribution (the Clopper-Pearson bounds are such quantiles)."""
    return float(special.betaincinv(a, b, q))
