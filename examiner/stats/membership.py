"""Document-level statistics of a memorisation probe: a mean over documents with its interval, and the
AUROC that separates the probed corpus's documents from a negative control's, with its interval.

Why documents: sentences of one document are not independent evidence (a model that saw a page saw all of
it), so the document is the cluster and its mean is the unit of analysis; a per-sentence or per-document
verdict is never given, only figures over documents with intervals wide enough for their few documents.

The AUROC interval is Newcombe's (2006, "Confidence intervals for an effect size measure based on the
Mann-Whitney statistic. Part 2", method 5): a score interval on the Hanley-McNeil variance taken at the
candidate value with N = (m + n) / 2. Unlike a bootstrap or DeLong interval it does not collapse to a
point when the two samples are separated completely, which is common with a handful of documents a side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from examiner.stats.correlation import Figures
from examiner.stats.distributions import norm_ppf
from examiner.stats.intervals import t_interval

LEVEL = 0.95


@dataclass(frozen=True)
class MeanInterval(Figures):
    """The mean of per-document values with its t interval over documents (df = documents - 1)."""

    mean: float
    low: float
    high: float
    documents: int
    sd: float


def document_mean(values: Sequence[float], level: float = LEVEL) -> MeanInterval:
    """Mean of one value per document, with its interval; NaN bounds below two documents."""
    x = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return MeanInterval(math.nan, math.nan, math.nan, 0, math.nan)
    mean = float(x.mean())
    if n < 2:
        return MeanInterval(mean, math.nan, math.nan, n, math.nan)
    sd = float(x.std(ddof=1))
    low, high = t_interval(mean, sd / math.sqrt(n), n - 1, level)
    return MeanInterval(mean, float(low), float(high), n, sd)


@dataclass(frozen=True)
class Auroc(Figures):
    """P(a probed document scores above a control document), ties counting a half, with its interval."""

    auroc: float
    low: float
    high: float
    probed: int
    control: int


def auroc(probed: Sequence[float], control: Sequence[float]) -> float:
    """The Mann-Whitney AUROC of `probed` over `control` (ties count one half); NaN when a side is empty."""
    a = np.asarray(probed, dtype=float)
    b = np.asarray(control, dtype=float)
    if a.size == 0 or b.size == 0:
        return math.nan
    greater = (a[:, None] > b[None, :]).sum()
    ties = (a[:, None] == b[None, :]).sum()
    return float((greater + 0.5 * ties) / (a.size * b.size))


def _newcombe_variance(theta: float, m: int, n: int) -> float:
    """Hanley-McNeil's variance of an AUROC at `theta`, with both sample sizes replaced by (m + n) / 2."""
    big_n = (m + n) / 2.0
    return theta * (1.0 - theta) / (m * n) * ((2 * big_n - 1) - (3 * big_n - 3) / ((2 - theta) * (1 + theta)))


def auroc_interval(probed: Sequence[float], control: Sequence[float], level: float = LEVEL) -> Auroc:
    """The AUROC with Newcombe's score interval (see the module); NaN bounds when a side is empty."""
    from scipy.optimize import brentq

    m, n = len(probed), len(control)
    value = auroc(probed, control)
    if not math.isfinite(value):
        return Auroc(value, math.nan, math.nan, m, n)
    z = norm_ppf(1 - (1 - level) / 2)

    def gap(theta: float) -> float:
        return abs(value - theta) - z * math.sqrt(max(_newcombe_variance(theta, m, n), 0.0))

    inner = min(max(value, 1e-9), 1 - 1e-9)  # where the gap is negative, also at an AUROC of 0 or 1
    low = 0.0 if value <= 0.0 or gap(0.0) <= 0 else float(brentq(gap, 0.0, inner))
    high = 1.0 if value >= 1.0 or gap(1.0) <= 0 else float(brentq(gap, inner, 1.0))
    return Auroc(value, low, high, m, n)


__all__ = ["Auroc", "MeanInterval", "auroc", "auroc_interval", "document_mean"]
