"""Human-calibrated accuracy: the judge's figure corrected by a random sample of human labels.

Why: an exam's headline accuracy is one LLM judge's opinion, and a judge that passes 30 % of wrong
answers reports a figure biased upwards however many units it grades. Humans labelling a random sample
give an unbiased figure, but a wide one. Prediction-powered inference (PPI++: Angelopoulos, Duchi & Zrnic
2023, "PPI++: Efficient Prediction-Powered Inference"; Boyeau et al. 2024 apply it to LLM judges) takes
the best of both: the human mean on the sample, plus lambda x (the judge's mean on the unlabelled units
minus the judge's mean on the sample). The second term removes the judge's bias on average (exactly for a
fixed lambda; lambda tuned on the same sample leaves a small bias the experiment measures); its
variance is small when the judge tracks the humans.

For a mean (their Example 1), with n labelled pairs (Y_i, f_i) and N unlabelled judge labels g_j:
  theta = mean(Y) + lambda (mean(g) - mean(f)),
  var   = Var(Y - lambda f) / n + lambda^2 Var(g) / N,
  lambda (power-tuned) = Cov(Y, f) / ((1 + n / N) Var(f)), clipped to [0, 1]
(lambda = 0 is the human-only mean, lambda = 1 the original PPI); interval theta +- z sqrt(var). A tuned
lambda is cross-fitted in the estimate (leave-one-out: unit i's term uses the lambda of the other n - 1
labelled units), so that the choice of lambda cannot pull the estimate: on a 10 % label with 20 labels the same-sample lambda gave a bias of -0.015 (13 Monte Carlo
standard errors); the variance uses the lambda of all n. For 0/1
labels `calibrated_accuracy` takes the variance of the labelled part from the (human, judge) table with
half a unit added to each cell (Agresti & Min 2005), the estimate from the labels as they are;
experiments/stats_calibration.py measures its coverage, its bias on a rare label and how often its
interval is wider than the human-only Wilson interval (docs/STATISTICS.md section 3).

The human sample must be random (drawn by the tool, its draw recorded): overrides made while browsing
are chosen, not drawn, and would bias every figure here.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from examiner.stats.correlation import Figures
from examiner.stats.distributions import norm_ppf

__all__ = [
    "MeanEstimate",
    "LabelAgreement",
    "Agreement",
    "CalibratedAccuracy",
    "check_ppi_sizes",
    "ppi_mean",
    "agreement",
    "calibrated_accuracy",
]


@dataclass(frozen=True)
class MeanEstimate(Figures):
    """A mean with its interval: `n` labelled (human) units and `n_unlabelled` judge-only ones behind it."""

    estimate: float
    low: float
    high: float
    level: float
    standard_error: float
    n: int
    n_unlabelled: int
    method: str


@dataclass(frozen=True)
class LabelAgreement(Figures):
    """For one label: sensitivity = P(judge gives it | humans gave it), specificity = P(judge does not |
    humans did not), each with a Wilson interval; nan where the humans never (or always) gave it."""

    label: str
    n_human: int
    sensitivity: float
    sensitivity_low: float
    sensitivity_high: float
    specificity: float
    specificity_low: float
    specificity_high: float


@dataclass(frozen=True)
class Agreement(Figures):
    """Judge against humans on the units both labelled: observed agreement, Cohen's kappa with its
    asymptotic interval (statsmodels), and sensitivity / specificity per label."""

    n: int
    observed: float
    kappa: float
    kappa_low: float
    kappa_high: float
    per_label: tuple[LabelAgreement, ...]


@dataclass(frozen=True)
class CalibratedAccuracy(Figures):
    """The judge's raw accuracy beside the human-calibrated one (PPI++) and the human-only one, the
    tuned lambda, the judge's bias (raw minus calibrated), and its agreement with the humans."""

    judge_raw: MeanEstimate
    ppi: MeanEstimate
    human_only: MeanEstimate
    lam: float
    judge_bias: float
    agreement: Agreement
    n_left_out: int



def check_ppi_sizes(labelled: int, judge_labelled: int, unlabelled: int) -> None:
    """Refuse what no PPI estimate can be made from: labels and the judge's labels of the labelled units of
    different lengths, fewer than two labelled units, or no unit the people left to the judge."""
    if judge_labelled != labelled:
        raise ValueError("human and judge_labelled must label the same units")
    if labelled < 2:
        raise ValueError("PPI needs at least two human-labelled units")
    if unlabelled == 0:
        raise ValueError("PPI needs judge labels on units the humans did not label")

def _z(level: float) -> float:
    return norm_ppf(0.5 + level / 2)


def ppi_mean(
    human: Sequence[float] | np.ndarray,
    judge_labelled: Sequence[float] | np.ndarray,
    judge_unlabelled: Sequence[float] | np.ndarray,
    *,
    level: float = 0.95,
    lam: float | None = None,
    half_cells: bool = False,
) -> tuple[MeanEstimate, float]:
    """PPI++ estimate of a mean from human labels and the judge's labels on the same n units, plus the
    judge's labels on N other units; returns the estimate and the lambda used (tuned unless given).

    half_cells (0/1 labels only): the labelled part, mean(Y - lambda f), is a paired difference of two
    binary labels, and like one its Wald interval runs a little short in samples of a few hundred; its
    variance is taken from the (human, judge) 2 x 2 table with half a unit added to each cell, as Agresti &
    Min (2005) do for paired proportions. The estimate stays the plain PPI++ one: the pseudo-cells pulled
    a rare label's estimate towards a half (+0.021 at 20 labels on PandaLM's 10.5 % ties, issue 40)."""
    y = np.asarray(human, dtype=float)
    f = np.asarray(judge_labelled, dtype=float)
    g = np.asarray(judge_unlabelled, dtype=float)
    n, big_n = y.size, g.size
    check_ppi_sizes(n, f.size, big_n)
    per_unit: np.ndarray | None = None
    if lam is None:
        var_f = float(np.var(np.concatenate([f, g]), ddof=1))
        scale = (1 + n / big_n) * var_f
        cov = float(np.cov(y, f, ddof=1)[0, 1])
        lam = 0.0 if var_f == 0 else float(np.clip(cov / scale, 0.0, 1.0))
        per_unit = _leave_one_out_lambdas(y, f, scale)
    rectifier = y - lam * f
    weights = np.ones(n)
    if half_cells:
        if not (np.isin(y, (0.0, 1.0)).all() and np.isin(f, (0.0, 1.0)).all()):
            raise ValueError("half_cells needs 0/1 labels")
        rectifier = np.concatenate([rectifier, [0.0, -lam, 1.0, 1.0 - lam]])  # cells (0,0) (0,1) (1,0) (1,1)
        weights = np.concatenate([weights, np.full(4, 0.5)])
    centre = float(np.average(rectifier, weights=weights))
    spread = float(np.average((rectifier - centre) ** 2, weights=weights)) * weights.sum() / (weights.sum() - 1)
    # The pseudo-cells widen, never shift; a tuned lambda is cross-fitted for the estimate (each unit's
    # correction uses the lambda of the other labelled units), since the lambda of the same units rises
    # exactly when they hold more of a rare label and pulled the estimate down (-0.015 at 20 labels).
    if per_unit is None:
        estimate = float(np.mean(y - lam * f)) + lam * float(g.mean())
    else:
        estimate = float(np.mean(y + per_unit * (float(g.mean()) - f)))
    variance = spread / weights.sum() + lam**2 * (float(np.var(g, ddof=1)) if big_n > 1 else 0.0) / big_n
    se = math.sqrt(variance)
    half = _z(level) * se
    method = "PPI++ (power-tuned lambda)" if lam not in (0.0, 1.0) else ("human only" if lam == 0 else "PPI")
    if half_cells:
        method += ", half a unit per 2 x 2 cell"
    return MeanEstimate(estimate, estimate - half, estimate + half, level, se, n, big_n, method), lam


def _leave_one_out_lambdas(y: np.ndarray, f: np.ndarray, scale: float) -> np.ndarray:
    """Each labelled unit's lambda from the other n - 1 labelled units (the covariance of human and judge
    labels without it, over the same judge variance `scale`), clipped to [0, 1]; zeros when n < 3 or the
    judge never varies."""
    n = y.size
    if n < 3 or scale == 0:
        return np.zeros(n)
    rest = n - 1
    sum_y, sum_f, sum_yf = y.sum() - y, f.sum() - f, (y * f).sum() - y * f
    cov = (sum_yf - sum_y * sum_f / rest) / (rest - 1)
    return np.asarray(np.clip(cov / scale, 0.0, 1.0))


def _wilson(count: int, nobs: int, level: float) -> tuple[float, float]:
    if nobs == 0:
        return math.nan, math.nan
    from statsmodels.stats.proportion import proportion_confint  # here: reports that import this load it only to use it

    low, high = proportion_confint(count, nobs, alpha=1 - level, method="wilson")
    return float(low), float(high)


def agreement(human: Sequence[Hashable], judge: Sequence[Hashable], *, level: float = 0.95) -> Agreement:
    """Judge against humans on the same units (any labels): observed agreement, Cohen's kappa with its
    interval, sensitivity and specificity per label."""
    if len(human) != len(judge):
        raise ValueError("human and judge must label the same units")
    n = len(human)
    if n == 0:
        raise ValueError("no units labelled by both")
    labels = sorted(set(human) | set(judge), key=str)
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for h, j in zip(human, judge):
        table[index[h], index[j]] += 1
    observed = float(np.trace(table) / n)
    if len(labels) < 2:
        kappa = low = high = 1.0
    else:
        from statsmodels.stats.inter_rater import cohens_kappa

        result = cohens_kappa(table)
        kappa, std = float(result.kappa), float(result.std_kappa)
        low, high = kappa - _z(level) * std, kappa + _z(level) * std
    per_label = []
    for label, i in index.items():
        positives = int(table[i].sum())
        negatives = n - positives
        true_pos = int(table[i, i])
        true_neg = int(negatives - (table[:, i].sum() - table[i, i]))
        sens_low, sens_high = _wilson(true_pos, positives, level)
        spec_low, spec_high = _wilson(true_neg, negatives, level)
        per_label.append(
            LabelAgreement(
                label=str(label),
                n_human=positives,
                sensitivity=true_pos / positives if positives else math.nan,
                sensitivity_low=sens_low,
                sensitivity_high=sens_high,
                specificity=true_neg / negatives if negatives else math.nan,
                specificity_low=spec_low,
                specificity_high=spec_high,
            )
        )
    return Agreement(n, observed, kappa, float(low), float(high), tuple(per_label))


def calibrated_accuracy(
    judge: Sequence[int | bool | None],
    human: Sequence[int | bool | None],
    *,
    level: float = 0.95,
) -> CalibratedAccuracy:
    """Accuracy over the units the judge scored (1 correct, 0 incorrect, None unscored), calibrated by
    the units a human also labelled from a random sample (None where not in the sample). Units the judge
    left unscored are left out of all figures (`n_left_out` counts them)."""
    if len(judge) != len(human):
        raise ValueError("judge and human must have one entry per unit")
    scored = [(float(j), None if h is None else float(h)) for j, h in zip(judge, human) if j is not None]
    left_out = len(judge) - len(scored)
    labelled = [(j, h) for j, h in scored if h is not None]
    unlabelled = np.array([j for j, h in scored if h is None])
    if len(labelled) < 2:
        raise ValueError("need at least two units labelled by both the judge and a human")
    f = np.array([j for j, _ in labelled])
    y = np.array([h for _, h in labelled])
    ppi, lam = ppi_mean(y, f, unlabelled, level=level, half_cells=True)
    everything = np.array([j for j, _ in scored])
    raw_low, raw_high = _wilson(int(everything.sum()), everything.size, level)
    raw = MeanEstimate(
        float(everything.mean()), raw_low, raw_high, level,
        float(math.sqrt(everything.mean() * (1 - everything.mean()) / everything.size)),
        0, int(everything.size), "judge alone (Wilson; its bias is not in the interval)",
    )
    human_low, human_high = _wilson(int(y.sum()), y.size, level)
    human_only = MeanEstimate(
        float(y.mean()), human_low, human_high, level,
        float(math.sqrt(y.mean() * (1 - y.mean()) / y.size)), int(y.size), 0, "human sample alone (Wilson)",
    )
    return CalibratedAccuracy(
        judge_raw=raw,
        ppi=ppi,
        human_only=human_only,
        lam=lam,
        judge_bias=raw.estimate - ppi.estimate,
        agreement=agreement([int(v) for v in y], [int(v) for v in f], level=level),
        n_left_out=left_out,
    )
