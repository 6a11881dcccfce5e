"""Cluster intervals of the knowledge figures (examiner.stats.knowledge) for one target, and of the paired
difference of a figure between two targets on the same units.

Why two methods: a figure that is a ratio of per-unit sums gets the linearised (cluster-robust) variance the
accuracy uses (examiner.stats.clusters.ratio_residuals): SimpleQA's F is one, since the harmonic mean of
k / n and k / m is 2k / (n + m) (k right, n asked, m attempted); so are the penalised score (per-unit score
over units asked) and the Brier score (squared gap over attempted units with a confidence). ECE and AURC are
not sums of units (bins and a ranking), so they get the delete-one-group jackknife over the same groups
(documents, or clusters when there is one document), never below their variance were the units independent
(for the ratios, with the per-unit values shrunk by half a unit towards the ends of the figure's range, so a
row whose units all agree still gets a width). Both are estimate +- t_{G-1} x standard error, the
family of examiner.stats.intervals; experiments/knowledge_boundaries.py measures their coverage.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from examiner.stats.clusters import grouping, ratio_residuals, robust_variance, totals_by
from examiner.stats.correlation import Figures
from examiner.stats.intervals import t_interval
from examiner.stats.knowledge import (ECE_BINS, PENALTY_TARGETS, expected_calibration_error,
                                      risk_coverage_area)

__all__ = ["FIGURES", "FigureInterval", "LOWER_IS_BETTER", "figure_interval", "figure_range", "figure_value",
           "paired_figure_difference"]

RATES = ("accuracy", "hallucination_rate", "abstention_rate", "correct_given_attempted")
FIGURES: tuple[str, ...] = (*RATES, "f_score", *(f"penalised_{t}" for t in PENALTY_TARGETS), "ece", "brier",
                            "aurc")
"""Every knowledge figure an interval or a paired difference is given for."""
LOWER_IS_BETTER = frozenset({"hallucination_rate", "abstention_rate", "ece", "brier", "aurc"})
JACKKNIFED = frozenset({"ece", "aurc"})


def figure_range(name: str) -> tuple[float, float]:
    """Where a figure can lie (an interval is clipped to it): a penalised score at t from -t/(1-t) to 1,
    every other figure from 0 to 1."""
    if name.startswith("penalised_"):
        t = float(name.rsplit("_", 1)[1])
        return -t / (1 - t), 1.0
    return 0.0, 1.0


Status = Sequence[str]
Confidence = Sequence[float | None]


@dataclass(frozen=True)
class FigureInterval(Figures):
    """A figure (or a difference B - A of one) with its interval: estimate +- t_{G-1} x standard error."""

    estimate: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    method: str
    n_units: int
    n_groups: int
    grouped_by: str
    level: float = 0.95


def _check(name: str) -> None:
    if name not in FIGURES:
        raise ValueError(f"unknown knowledge figure {name!r} (known: {', '.join(FIGURES)})")


def _columns(name: str, status: Status, confidence: Confidence) -> tuple[np.ndarray, np.ndarray]:
    """(numerator, denominator) per unit of a ratio figure: the figure is sum(numerator) / sum(denominator).
    A unit that is not covered (neither correct, incorrect nor abstained) counts in no denominator."""
    s = np.asarray(status, dtype=object)
    right, wrong, declined = (s == "correct").astype(float), (s == "incorrect").astype(float), (s == "abstained")
    asked = right + wrong + declined
    attempted = right + wrong
    if name == "accuracy":
        return right, asked
    if name == "hallucination_rate":
        return wrong, attempted
    if name == "abstention_rate":
        return declined.astype(float), asked
    if name == "correct_given_attempted":
        return right, attempted
    if name == "f_score":  # 2 A C / (A + C) with A = k / n, C = k / m is 2 k / (n + m)
        return 2 * right, asked + attempted
    if name.startswith("penalised_"):
        t = float(name.rsplit("_", 1)[1])
        return right - wrong * t / (1 - t), asked
    if name == "brier":
        conf = np.array([math.nan if c is None else float(c) for c in confidence])
        stated = (attempted > 0) & ~np.isnan(conf)
        return np.where(stated, (np.nan_to_num(conf) - right) ** 2, 0.0), stated.astype(float)
    raise ValueError(f"{name} is not a ratio of per-unit sums")


def _jackknifed(name: str, status: Status, confidence: Confidence) -> float | None:
    """ECE or AURC over the attempted units with a confidence."""
    kept = [(c, int(s == "correct")) for s, c in zip(status, confidence) if s in ("correct", "incorrect")]
    conf, right = [c for c, _ in kept], [y for _, y in kept]
    if not any(c is not None for c in conf):
        return None
    return expected_calibration_error(conf, right) if name == "ece" else risk_coverage_area(conf, right)


def _independent_variance(name: str, status: Status, confidence: Confidence) -> float:
    """ECE's or AURC's variance were the units independent, the floor of the jackknife's (which reads 0
    when every leave-one-out figure is 0, as a debiased ECE clipped at 0 often is on a few documents): for
    ECE, sum over bins of n_b p_b (1 - p_b) / N^2 (the plug-in gaps' binomial noise); for AURC, which is
    sum_i c_i x error_i with c_i = (1/N) sum_{k >= i} 1/k over the ranking (ties given their mean c),
    sum_i c_i^2 x r_i (1 - r_i), r_i the error rate of the units ranked down to i. Shares are shrunk by half
    a unit each way ((k + 0.5) / (n + 1)), so three answers all wrong are not read as a noiseless 0."""
    kept = [(float(c), float(s == "correct")) for s, c in zip(status, confidence)
            if s in ("correct", "incorrect") and c is not None]
    if len(kept) < 2:
        return 0.0
    conf, right = (np.array(v) for v in zip(*kept))
    n = conf.size
    if name == "ece":
        index = np.minimum((conf * ECE_BINS).astype(int), ECE_BINS - 1)
        sizes = np.bincount(index, minlength=ECE_BINS).astype(float)
        rights = np.bincount(index, weights=right, minlength=ECE_BINS)
        share = (rights + 0.5) / (sizes + 1)  # shrunk off 0 and 1: a bin all right or all wrong is noisy too
        return float(np.sum(sizes * share * (1 - share)) / n**2)
    order = np.argsort(-conf, kind="stable")
    weight = np.cumsum((1.0 / np.arange(1, n + 1))[::-1])[::-1] / n  # c_i for rank i
    _, tie = np.unique(-conf[order], return_inverse=True)
    weight = (np.bincount(tie, weights=weight) / np.bincount(tie))[tie]
    # each rank's chance of error: the error rate among the units ranked above it and itself, shrunk
    # towards the overall rate by one unit (the top units of a good ranking err less than the rest)
    rate = (float(np.sum(1 - right)) + 0.5) / (n + 1)
    local = (np.cumsum(1 - right[order]) + rate) / np.arange(2, n + 2)
    return float(np.sum(weight**2 * local * (1 - local)))


def figure_value(name: str, status: Status, confidence: Confidence) -> float | None:
    """The figure over the units (None when it is undefined: nothing asked, attempted or stated)."""
    _check(name)
    if name in JACKKNIFED:
        return _jackknifed(name, status, confidence)
    num, den = _columns(name, status, confidence)
    return float(num.sum() / den.sum()) if den.sum() > 0 else None


def _ratio_variance(num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray | None, den_b: np.ndarray | None,
                    codes: np.ndarray, n_groups: int) -> float:
    """Linearised variance of ratio B (or of B - A when A is given), the larger of the cluster-robust one
    over the groups and the one of independent units (clustering never makes a figure look more precise)."""
    def residuals(num: np.ndarray, den: np.ndarray, by: np.ndarray, groups: int) -> np.ndarray:
        totals = totals_by(by, groups, np.column_stack([num, den]))
        return ratio_residuals(totals[:, 0], totals[:, 1])

    units = np.arange(num_a.size)
    variances = []
    for by, groups in ((codes, n_groups), (units, num_a.size)):
        r = residuals(num_a, den_a, by, groups)
        if num_b is not None and den_b is not None:
            r = residuals(num_b, den_b, by, groups) - r
        variances.append(robust_variance(r))
    return max(variances)


def _shrunk_variance(name: str, num: np.ndarray, den: np.ndarray) -> float:
    """A ratio figure's variance were the units independent, with the per-unit values (numerator over
    denominator) shrunk by half a unit towards both ends of the figure's range, as Agresti-Coull and Wilson
    shrink a share to (k + 0.5) / (n + 1): the spread s^2 of the values with a weight of half a mean unit added
    at each end, times sum(d_i^2) / D^2 (d_i the denominators). It floors the linearised variance, which reads
    0 when every unit has the same value (two documents' units all wrong), so such a row is not taken as
    noiseless; it shrinks as 1/n and, for a 0/1 figure, is p(1 - p)/n at the shrunk share p."""
    used = den > 0
    if not used.any():
        return 0.0
    d, y = den[used], num[used] / den[used]
    total, half = float(d.sum()), float(d.mean()) / 2
    bottom, top = figure_range(name)
    centre = (float(np.sum(d * y)) + half * (bottom + top)) / (total + 2 * half)
    spread = (float(np.sum(d * (y - centre) ** 2)) + half * ((bottom - centre) ** 2 + (top - centre) ** 2)) / (
        total + 2 * half)
    return spread * float(np.sum(d**2)) / total**2


def _jackknife_variance(statistic: Callable[[np.ndarray], float | None], codes: np.ndarray, n_groups: int
                        ) -> float:
    """Delete-one-group jackknife: (G - 1) / G x sum of squared deviations of the leave-one-out figures
    (groups whose removal leaves the figure undefined are skipped)."""
    if n_groups < 2:
        return 0.0
    left_out = [statistic(codes != g) for g in range(n_groups)]
    values = np.array([v for v in left_out if v is not None], dtype=float)
    if values.size < 2:
        return 0.0
    return float((values.size - 1) / values.size * np.sum((values - values.mean()) ** 2))


def _interval(name: str, estimate: float | None, variance: float, n_units: int, n_groups: int, grouped_by: str,
              method: str, level: float, *, difference: bool) -> FigureInterval:
    if estimate is None or not math.isfinite(estimate):
        return FigureInterval(None, None, None, None, "undefined", n_units, n_groups, grouped_by, level)
    se = math.sqrt(max(variance, 0.0))
    low, high = t_interval(estimate, se, n_groups - 1, level)
    bottom, top = figure_range(name)
    if difference:
        bottom, top = bottom - top, top - bottom
    return FigureInterval(estimate, max(low, bottom), min(high, top), se, method, n_units, n_groups, grouped_by,
                          level)


def _method(name: str, top_stage: str) -> str:
    how = "delete-one-group jackknife" if name in JACKKNIFED else "linearised ratio variance"
    return f"{how} over {top_stage}, t on {top_stage} - 1 df"


def figure_interval(name: str, status: Status, confidence: Confidence, documents: Sequence[Hashable],
                    clusters: Sequence[Hashable] | None = None, *, level: float = 0.95) -> FigureInterval:
    """One target's figure over its units with its cluster interval (the module docstring says which
    method); units are grouped by document, or by exam cluster when all come from one document."""
    _check(name)
    if not (len(status) == len(confidence) == len(documents)):
        raise ValueError("one status, confidence and document per unit")
    if not status:
        return FigureInterval(None, None, None, None, "no units", 0, 0, "documents", level)
    g = grouping(documents, clusters)
    estimate = figure_value(name, status, confidence)
    if name in JACKKNIFED:
        s, c = np.asarray(status, dtype=object), list(confidence)

        def statistic(keep: np.ndarray) -> float | None:
            return _jackknifed(name, list(s[keep]), [c[i] for i in np.flatnonzero(keep).tolist()])

        variance = max(_jackknife_variance(statistic, g.document, g.n_documents),
                       _independent_variance(name, status, confidence))
    else:
        num, den = _columns(name, status, confidence)
        variance = max(_ratio_variance(num, den, None, None, g.document, g.n_documents),
                       _shrunk_variance(name, num, den))
    return _interval(name, estimate, variance, len(status), g.n_documents, g.top_stage,
                     _method(name, g.top_stage), level, difference=False)


def paired_figure_difference(name: str, status_a: Status, confidence_a: Confidence, status_b: Status,
                             confidence_b: Confidence, documents: Sequence[Hashable],
                             clusters: Sequence[Hashable] | None = None, *, level: float = 0.95
                             ) -> FigureInterval:
    """B - A of a figure on the same units (position i is one unit for both), with its interval: the
    variance of the difference from the same groups for both sides, so what the two targets share (a
    document hard for both) cancels, as in the paired accuracy difference."""
    _check(name)
    if not (len(status_a) == len(status_b) == len(confidence_a) == len(confidence_b) == len(documents)):
        raise ValueError("one status, confidence and document per unit and side")
    if not status_a:
        return FigureInterval(None, None, None, None, "no units", 0, 0, "documents", level)
    g = grouping(documents, clusters)
    value_a, value_b = figure_value(name, status_a, confidence_a), figure_value(name, status_b, confidence_b)
    estimate = None if value_a is None or value_b is None else value_b - value_a
    if name in JACKKNIFED:
        sa, sb = np.asarray(status_a, dtype=object), np.asarray(status_b, dtype=object)

        def statistic(keep: np.ndarray) -> float | None:
            idx = np.flatnonzero(keep).tolist()
            a = _jackknifed(name, list(sa[keep]), [confidence_a[i] for i in idx])
            b = _jackknifed(name, list(sb[keep]), [confidence_b[i] for i in idx])
            return None if a is None or b is None else b - a

        variance = max(_jackknife_variance(statistic, g.document, g.n_documents),
                       _independent_variance(name, status_a, confidence_a)
                       + _independent_variance(name, status_b, confidence_b))
    else:
        num_a, den_a = _columns(name, status_a, confidence_a)
        num_b, den_b = _columns(name, status_b, confidence_b)
        variance = _ratio_variance(num_a, den_a, num_b, den_b, g.document, g.n_documents)
    return _interval(name, estimate, variance, len(status_a), g.n_documents, g.top_stage,
                     "paired " + _method(name, g.top_stage), level, difference=True)
