"""How much of an accuracy is the questions' wording? Variance parts, rank flips and a wording-aware error.

Why: examiner's questions are written by a model, and the same question in other words can be answered
differently; a result that moves with the wording is not a property of the target's knowledge alone. When
a seeded share of questions is asked again in K paraphrases, each paraphrased question gives, per target, a
table of unit outcomes crossing wordings (rows) with its units (columns). In such a table:

- the wording main effect (a wording shifts all of the question's units together) is told apart from the
  unit-by-wording noise by the two-way analysis of variance without replication: per table,
  E[SS_wording] = (W - 1)(m sigma2_wording + sigma2_noise) and E[SS_noise] = (W - 1)(m - 1) sigma2_noise;
  pooled over tables (method of moments, any m per table), sigma2_wording = (sum SS_wording - sigma2_noise
  x sum (W - 1)) / sum (W - 1) m, clipped at 0;
- the judge's part of the unit noise comes from the self-check (the same answer marked twice): half the
  mean squared difference of the two markings is the variance of one marking of a fixed answer;
- the cluster (question) part is what remains of the variance of per-question accuracies across questions
  once the wording and noise parts of a question's accuracy are taken off.
The parts are given on the scale of one question's accuracy (a unit-level variance over m units counts
1/m, averaged over the questions), with their shares of the total.

The same analysis on the paired differences B - A per unit gives the wording variance of a difference.
Units of one question usually come from several documents, and the document-clustered standard error of
`examiner.stats.paired` counts the covariance a shared wording makes only between units of one document:
`wording_aware_variance` adds the rest, sigma2_wording x sum over questions of (m_q^2 - sum over documents
m_qg^2) / N^2. `rank_flip_probability` is the chance that a fresh rewording of every question reverses the
sign of the difference: the reworded difference moves from the observed one by the new wording's part minus
the old's, variance 2 x sigma2_wording x sum m_q^2 / N^2 (normal approximation).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from examiner.stats.correlation import Figures

__all__ = [
    "CrossedParts",
    "WordingParts",
    "crossed_parts",
    "judge_variance",
    "decompose",
    "cross_document_weight",
    "wording_aware_variance",
    "rank_flip_probability",
]


@dataclass(frozen=True)
class CrossedParts(Figures):
    """Unit-level variances from tables of wordings x units: the wording main effect (clipped at 0) and the
    unit-by-wording noise, with the numbers of tables and of wordings beyond the first that carry them."""

    wording: float
    noise: float
    tables: int
    extra_wordings: int
    wording_unclipped: float = math.nan
    """The moment estimate before clipping (may be negative): unbiased, the figure to average over runs."""


@dataclass(frozen=True)
class WordingParts(Figures):
    """Variance of one question's accuracy in parts (cluster, wording, judge, answer noise) and shares."""

    cluster: float
    wording: float
    judge: float
    answer_noise: float
    total: float
    wording_share: float
    cluster_share: float
    judge_share: float
    questions: int
    paraphrased: int
    rejudged_units: int


def crossed_parts(tables: Sequence[np.ndarray]) -> CrossedParts:
    """Pooled wording and noise variances from tables (rows: wordings of one question, at least 2;
    columns: its units, at least 2; values 0/1, or -1/0/1 for differences). Tables with fewer than two
    rows or columns carry nothing and are left out; nan when none is left."""
    ss_w = ss_e = df_w = df_e = weight = 0.0
    used = 0
    for table in tables:
        y = np.asarray(table, dtype=float)
        if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] < 2:
            continue
        w, m = y.shape
        grand = y.mean()
        rows, cols = y.mean(axis=1), y.mean(axis=0)
        ss_w += m * float(np.sum((rows - grand) ** 2))
        ss_e += float(np.sum((y - rows[:, None] - cols[None, :] + grand) ** 2))
        df_w += w - 1
        df_e += (w - 1) * (m - 1)
        weight += (w - 1) * m
        used += 1
    if not used:
        return CrossedParts(math.nan, math.nan, 0, 0)
    noise = ss_e / df_e
    raw = (ss_w - noise * df_w) / weight
    return CrossedParts(max(0.0, raw), noise, used, int(df_w), raw)


def judge_variance(first: Sequence[float], second: Sequence[float]) -> float:
    """Variance of one marking of a fixed answer's unit: half the mean squared difference of two markings
    of the same units (the self-check's). nan without pairs."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape:
        raise ValueError("one second marking per first marking")
    return float(np.mean((a - b) ** 2) / 2) if a.size else math.nan


def decompose(question_accuracies: Sequence[float], question_sizes: Sequence[int], crossed: CrossedParts,
              judge_unit_variance: float, rejudged_units: int = 0) -> WordingParts:
    """The parts of the variance of one question's accuracy: `question_accuracies` (each question in its
    first wording) and their numbers of units, the crossed parts of the paraphrased questions, and the
    judge's unit-level variance from `rejudged_units` twice-marked units (nan when nothing was re-judged:
    its part is then counted as answer noise and reported as nan)."""
    acc = np.asarray(question_accuracies, dtype=float)
    sizes = np.asarray(question_sizes, dtype=float)
    if acc.shape != sizes.shape or np.any(sizes < 1):
        raise ValueError("one size of at least 1 per question accuracy")
    if acc.size < 2 or not math.isfinite(crossed.wording):
        nan = math.nan
        return WordingParts(nan, nan, nan, nan, nan, nan, nan, nan, int(acc.size), crossed.tables, rejudged_units)
    inverse = float(np.mean(1.0 / sizes))
    judge_known = math.isfinite(judge_unit_variance)
    judge_unit = min(judge_unit_variance, crossed.noise) if judge_known else 0.0
    wording = crossed.wording
    judge = judge_unit * inverse
    answer = (crossed.noise - judge_unit) * inverse
    cluster = max(0.0, float(np.var(acc, ddof=1)) - wording - crossed.noise * inverse)
    total = cluster + wording + judge + answer
    shares = [part / total if total > 0 else math.nan for part in (wording, cluster, judge)]
    return WordingParts(cluster, wording, judge if judge_known else math.nan, answer, total, shares[0],
                        shares[1], shares[2] if judge_known else math.nan, int(acc.size),
                        crossed.tables, rejudged_units)


def cross_document_weight(questions: Sequence[Hashable], documents: Sequence[Hashable]) -> float:
    """sum over questions of (m_q^2 - sum over documents m_qg^2) / N^2 for N units (one question id and
    one document id per unit): the weight of a shared wording's covariance that document clustering
    misses."""
    if len(questions) != len(documents):
        raise ValueError("one document id per unit")
    n = len(questions)
    if not n:
        return 0.0
    by_question: dict[Hashable, int] = {}
    by_pair: dict[tuple[Hashable, Hashable], int] = {}
    for q, g in zip(questions, documents, strict=True):
        by_question[q] = by_question.get(q, 0) + 1
        by_pair[(q, g)] = by_pair.get((q, g), 0) + 1
    same_question = sum(m * m for m in by_question.values())
    same_document = sum(m * m for m in by_pair.values())
    return (same_question - same_document) / n**2


def wording_aware_variance(blind_variance: float, wording_variance: float, questions: Sequence[Hashable],
                           documents: Sequence[Hashable]) -> float:
    """The document-clustered variance of a mean (or of a paired difference) plus the covariance a
    question's shared wording makes between its units of different documents. A wording variance that
    was not measured (nan) adds nothing: the caller says the figure is blind to wording."""
    if not math.isfinite(wording_variance):
        return blind_variance
    return blind_variance + wording_variance * cross_document_weight(questions, documents)


def rank_flip_probability(difference: float, wording_variance: float, questions: Sequence[Hashable]) -> float:
    """Chance that rewording every question reverses the sign of the accuracy difference `difference`
    (B - A over the units, one question id per unit), given the wording variance of the per-unit
    difference: Phi(-|d| / sqrt(2 sigma2 sum m_q^2 / N^2)). 0 when no wording effect was found, nan when
    none was measured."""
    if not (math.isfinite(difference) and math.isfinite(wording_variance)) or not questions:
        return math.nan
    sizes = np.unique(np.asarray([str(q) for q in questions]), return_counts=True)[1]
    spread = math.sqrt(2 * wording_variance * float(np.sum(sizes.astype(float) ** 2)) / len(questions) ** 2)
    if spread == 0:
        return 0.0 if difference != 0 else 0.5
    return 0.5 * math.erfc(abs(difference) / spread / math.sqrt(2))  # Phi(-|d| / spread), no scipy.stats to load
