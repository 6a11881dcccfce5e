"""Paired comparison of two targets examined on the same units: is B better than A, and by how much?

Why paired: both targets answer the same units, so most of the unit-to-unit variation cancels in the
difference; two separate intervals side by side waste that and can overlap where the paired difference is
clear. Why clustered: units of one source document share its topic and difficulty, and a target that
knows a document well gets many of its units right, so the difference itself is clustered; a test that
treats units as independent (McNemar's) then reports far more certainty than there is
(experiments/stats_calibration.py measures how much).

What `compare_paired` reports, with accuracy = correct / covered for each target (None = not covered):
- the difference B - A in accuracy and in coverage, with a 95 % interval estimate +- t_{documents - 1}
  x standard error, the same family at every number of documents (examiner.stats.intervals.
  paired_interval: the standard error is the largest of the cluster-robust one, the independent-units
  one and the one an exact interval of the units' discordant counts implies);
- McNemar's exact test on units both targets covered (statsmodels), which assumes independent units;
- the cluster-adjusted McNemar test of Obuchowski (1998, "On the comparison of correlated proportions for
  clustered data", Stat Med 17:1495): the difference over its cluster-robust standard error (per-document
  linearised residuals, G/(G-1) factor), here referred to t on documents - 1 degrees of freedom rather
  than chi-square(1), which matters only for few documents. It divides by the interval's standard error,
  so it rejects at 0.05 exactly when the 95 % interval leaves out 0. It tests whether the two targets'
  accuracies differ on these units' population of documents (the documents are the sampled unit);
- the design effect (clustered over independent variance) and the intraclass correlation of the paired
  difference within documents;
- the minimum detectable effect at 80 % power, the figure to plan with; and `power.achieved`, the power
  at the observed difference, which is only a restatement of the p-value (a small p gives a high
  "power"), kept in the JSON for readers of older reports and never printed as evidence.
`paired_subgroups` repeats the comparison per subgroup with Benjamini-Hochberg adjusted p-values, and
`non_inferiority` is the decision `examiner gate` makes.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from examiner.stats.clusters import Grouping, grouping, icc_anova, ratio_residuals, robust_variance, totals_by
from examiner.stats.correlation import Figures
from examiner.stats.distributions import binom_cdf, t_ppf, t_sf
from examiner.stats.intervals import Estimate, is_small_sample, paired_interval
from examiner.stats.planning import minimum_detectable_effect, power_at

__all__ = [
    "McNemar",
    "ClusteredTest",
    "Power",
    "PairedComparison",
    "Subgroup",
    "NonInferiority",
    "BLIND",
    "WORDING_AWARE",
    "mcnemar_exact",
    "compare_paired",
    "paired_subgroups",
    "non_inferiority",
    "smallest_margin",
    "margin_text",
]

Outcome = int | bool | None

_A_CORRECT, _A_COVERED, _B_CORRECT, _B_COVERED, _UNITS = range(5)


@dataclass(frozen=True)
class McNemar(Figures):
    """McNemar's exact (binomial) test on the units both targets covered: a_only = units A got right and
    B wrong, b_only the reverse. Valid when units are independent."""

    a_only: int
    b_only: int
    both_covered: int
    p_value: float


@dataclass(frozen=True)
class ClusteredTest(Figures):
    """Cluster-adjusted McNemar test (Obuchowski 1998) of no difference in accuracy: statistic =
    difference / standard error, two-sided p from t on df = documents - 1."""

    statistic: float
    df: int
    p_value: float
    standard_error: float
    method: str


@dataclass(frozen=True)
class Power(Figures):
    """Minimum detectable effect at `target_power` for the two-sided cluster test at `alpha` (the figure to
    plan with), and `achieved`, the power at the observed difference: a restatement of the p-value, kept
    in the JSON for older readers and printed nowhere."""

    alpha: float
    target_power: float
    minimum_detectable_effect: float
    achieved: float


@dataclass(frozen=True)
class PairedComparison(Figures):
    """Everything a report or a decision needs about B - A on shared units (see the module docstring)."""

    n_units: int
    n_documents: int
    n_clusters: int
    top_stage: str
    accuracy_a: float
    accuracy_b: float
    coverage_a: float
    coverage_b: float
    accuracy_difference: Estimate
    coverage_difference: Estimate
    mcnemar: McNemar
    clustered_test: ClusteredTest
    design_effect: float
    icc_difference: float
    power: Power
    small_sample: bool
    n_resamples: int = 0
    """Resamples drawn: 0, the paired interval is computed, not resampled (kept for readers of older reports)."""
    seed: int = 0
    """Unused by the computation (nothing is drawn); kept for readers of older reports."""
    smallest_margin: float = math.nan
    """How far the one-sided (1 - alpha) lower bound lies below the measured difference: a NEW measured
    as good as BASE passes `examiner gate` only at a margin above it (see `smallest_margin`)."""


def smallest_margin(difference: float, lower_bound: float) -> float:
    """The smallest non-inferiority margin a sample supports: the distance of the one-sided lower bound
    below the measured difference. Below it even a run held against itself (difference 0) cannot pass, since
    its bound then lies at -smallest_margin; it shrinks only with more units and documents. nan when
    either figure is."""
    gap = difference - lower_bound
    return float(max(gap, 0.0)) if math.isfinite(gap) else math.nan


def margin_text(value: float) -> str:
    """`0.021`: the smallest margin rounded up to three decimals, so that the printed margin passes
    where the exact one would (the gate passes strictly above it)."""
    if not math.isfinite(value):
        return "n/a"
    return f"{math.floor(value * 1000 + 1e-9) / 1000 + 0.001:.3f}"


def _as_arrays(a: Sequence[Outcome], b: Sequence[Outcome]) -> np.ndarray:
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} outcomes and B {len(b)}: a paired comparison needs the same units")
    cols = np.zeros((len(a), 5))
    for j, (x, y) in enumerate(zip(a, b)):
        for value, correct, covered in ((x, _A_CORRECT, _A_COVERED), (y, _B_CORRECT, _B_COVERED)):
            if value is None:
                continue
            if value not in (0, 1):
                raise ValueError(f"unit {j}: outcome {value!r} is not 0, 1 or None")
            cols[j, covered] = 1.0
            cols[j, correct] = float(value)
    cols[:, _UNITS] = 1.0
    return cols


def mcnemar_exact(a: Sequence[Outcome], b: Sequence[Outcome]) -> McNemar:
    """McNemar's exact test on the units both targets covered (binomial on discordant units, as statsmodels's)."""
    cols = _as_arrays(a, b)
    both = (cols[:, _A_COVERED] == 1) & (cols[:, _B_COVERED] == 1)
    ya, yb = cols[both, _A_CORRECT], cols[both, _B_CORRECT]
    a_only = int(np.sum((ya == 1) & (yb == 0)))
    b_only = int(np.sum((ya == 0) & (yb == 1)))
    # statsmodels' mcnemar(exact=True): twice the binomial(a_only + b_only, 1/2) tail of the smaller count,
    # capped at 1 (computed here so that gate and compare do not import statsmodels and pandas).
    p = min(1.0, 2 * binom_cdf(min(a_only, b_only), a_only + b_only, 0.5)) if a_only + b_only else 1.0
    return McNemar(a_only, b_only, int(both.sum()), p)


def _differences(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and coverage differences B - A from totals (..., 5)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = totals[..., _B_CORRECT] / totals[..., _B_COVERED] - totals[..., _A_CORRECT] / totals[..., _A_COVERED]
        cov = (totals[..., _B_COVERED] - totals[..., _A_COVERED]) / totals[..., _UNITS]
    return acc, cov


def _accuracy_residuals(by_group: np.ndarray) -> np.ndarray:
    b = ratio_residuals(by_group[:, _B_CORRECT], by_group[:, _B_COVERED])
    a = ratio_residuals(by_group[:, _A_CORRECT], by_group[:, _A_COVERED])
    return np.asarray(b - a)


def _coverage_residuals(by_group: np.ndarray) -> np.ndarray:
    return ratio_residuals(by_group[:, _B_COVERED] - by_group[:, _A_COVERED], by_group[:, _UNITS])


def _estimate(
    value: float,
    cluster_var: float,
    unit_var: float,
    discordant: tuple[int, int, int],
    g: Grouping,
    n_units: int,
    level: float,
) -> Estimate:
    """The difference with its interval (examiner.stats.intervals.paired_interval): the same family at
    every number of documents, and the standard error the cluster test divides by."""
    a_only, b_only, n = discordant
    interval = paired_interval(value, cluster_var, unit_var, a_only, b_only, n, g.n_documents, level)
    method = (f"t on {g.top_stage} - 1 df; standard error the largest of cluster-robust, independent-units "
              "and exact (Clopper-Pearson MOVER) on the units")
    return Estimate(value, interval.low, interval.high, level, interval.standard_error, method,
                    is_small_sample(g.n_documents), n_units, g.n_documents)


def compare_paired(
    a: Sequence[Outcome],
    b: Sequence[Outcome],
    documents: Sequence[Hashable],
    clusters: Sequence[Hashable] | None = None,
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    target_power: float = 0.8,
) -> PairedComparison:
    """Compare target B with target A on the same units: outcomes per unit 1 (correct), 0 (incorrect) or
    None (not covered), each unit's source document and, optionally, its exam cluster within the document.
    Differences are B - A. Deterministic: nothing is drawn at random."""
    cols = _as_arrays(a, b)
    if len(documents) != cols.shape[0]:
        raise ValueError("one document id per unit")
    g = grouping(documents, clusters)
    totals = cols.sum(axis=0)
    acc_diff, cov_diff = (float(v) for v in _differences(totals))
    by_doc = totals_by(g.document, g.n_documents, cols)
    acc_var = robust_variance(_accuracy_residuals(by_doc))
    cov_var = robust_variance(_coverage_residuals(by_doc))
    acc_unit_var = robust_variance(_accuracy_residuals(cols))
    cov_unit_var = robust_variance(_coverage_residuals(cols))
    test = mcnemar_exact(a, b)
    n = int(cols.shape[0])
    acc_discordant = (test.a_only, test.b_only, test.both_covered)
    cov_discordant = (
        int(np.sum((cols[:, _A_COVERED] == 1) & (cols[:, _B_COVERED] == 0))),
        int(np.sum((cols[:, _A_COVERED] == 0) & (cols[:, _B_COVERED] == 1))),
        n,
    )
    accuracy = _estimate(acc_diff, acc_var, acc_unit_var, acc_discordant, g, n, level)
    coverage = _estimate(cov_diff, cov_var, cov_unit_var, cov_discordant, g, n, level)
    # The cluster test at alpha uses the standard error of the interval at level 1 - alpha, so it rejects
    # exactly when that interval leaves out 0; the gate's one-sided bound is the interval at 1 - 2 alpha.
    two_sided = accuracy if math.isclose(level, 1 - alpha) else _estimate(
        acc_diff, acc_var, acc_unit_var, acc_discordant, g, n, 1 - alpha)
    one_sided = accuracy if math.isclose(level, 1 - 2 * alpha) else _estimate(
        acc_diff, acc_var, acc_unit_var, acc_discordant, g, n, 1 - 2 * alpha)
    se = two_sided.standard_error
    df = max(g.n_documents - 1, 1)
    statistic = acc_diff / se if se > 0 else (0.0 if acc_diff == 0 or math.isnan(acc_diff) else math.copysign(math.inf, acc_diff))
    p_value = 2 * t_sf(abs(statistic), df) if math.isfinite(acc_diff) else math.nan
    clustered = ClusteredTest(
        statistic=float(statistic),
        df=df,
        p_value=p_value,
        standard_error=se,
        method=f"Obuchowski (1998) cluster-adjusted McNemar over {g.top_stage}, t reference",
    )
    both = (cols[:, _A_COVERED] == 1) & (cols[:, _B_COVERED] == 1)
    difference = cols[both, _B_CORRECT] - cols[both, _A_CORRECT]
    return PairedComparison(
        n_units=n,
        n_documents=g.n_documents,
        n_clusters=g.n_clusters,
        top_stage=g.top_stage,
        accuracy_a=float(totals[_A_CORRECT] / totals[_A_COVERED]) if totals[_A_COVERED] else math.nan,
        accuracy_b=float(totals[_B_CORRECT] / totals[_B_COVERED]) if totals[_B_COVERED] else math.nan,
        coverage_a=float(totals[_A_COVERED] / n),
        coverage_b=float(totals[_B_COVERED] / n),
        accuracy_difference=accuracy,
        coverage_difference=coverage,
        mcnemar=test,
        clustered_test=clustered,
        design_effect=float(acc_var / acc_unit_var) if acc_unit_var > 0 else math.nan,
        icc_difference=icc_anova(difference, g.document[both]) if both.any() else math.nan,
        power=Power(
            alpha=alpha,
            target_power=target_power,
            minimum_detectable_effect=minimum_detectable_effect(se, alpha, target_power, df),
            achieved=power_at(acc_diff, se, alpha, df) if math.isfinite(acc_diff) else math.nan,
        ),
        small_sample=accuracy.small_sample,
        smallest_margin=smallest_margin(acc_diff, one_sided.low),
    )


@dataclass(frozen=True)
class Subgroup(Figures):
    """B - A within one subgroup; p_value from the cluster test when the subgroup spans two or more
    documents, else McNemar's exact test (`test` says which); p_adjusted by Benjamini-Hochberg over all
    subgroups, `significant` at the false discovery rate asked for."""

    key: str
    n_units: int
    n_documents: int
    accuracy_a: float
    accuracy_b: float
    difference: float
    low: float
    high: float
    test: str
    p_value: float
    p_adjusted: float
    significant: bool


def paired_subgroups(
    a: Sequence[Outcome],
    b: Sequence[Outcome],
    documents: Sequence[Hashable],
    groups: Sequence[Hashable],
    clusters: Sequence[Hashable] | None = None,
    *,
    false_discovery_rate: float = 0.05,
    level: float = 0.95,
) -> tuple[Subgroup, ...]:
    """The paired comparison within each subgroup (topic, document, question type, language: any key per
    unit), largest subgroup first, with Benjamini-Hochberg adjusted p-values (statsmodels multipletests,
    'fdr_bh') so that looking at many subgroups does not manufacture findings."""
    n = len(a)
    if not (len(b) == len(documents) == len(groups) == n):
        raise ValueError("a, b, documents and groups must have one entry per unit")
    members: dict[Hashable, list[int]] = {}
    for j, key in enumerate(groups):
        members.setdefault(key, []).append(j)
    rows: list[tuple[str, PairedComparison, str, float]] = []
    for key, idx in sorted(members.items(), key=lambda kv: (-len(kv[1]), str(kv[0]))):
        sub_clusters = None if clusters is None else [clusters[j] for j in idx]
        result = compare_paired(
            [a[j] for j in idx], [b[j] for j in idx], [documents[j] for j in idx], sub_clusters,
            level=level,
        )
        if result.n_documents >= 2:
            test, p = "cluster", result.clustered_test.p_value
        else:
            test, p = "mcnemar exact", result.mcnemar.p_value
        rows.append((str(key), result, test, p))
    p_values = np.array([r[3] for r in rows])
    finite = np.isfinite(p_values)
    adjusted = np.full(p_values.shape, math.nan)
    reject = np.zeros(p_values.shape, dtype=bool)
    if finite.any():
        from statsmodels.stats.multitest import multipletests

        reject[finite], adjusted[finite], _, _ = multipletests(p_values[finite], alpha=false_discovery_rate, method="fdr_bh")
    return tuple(
        Subgroup(
            key=key,
            n_units=r.n_units,
            n_documents=r.n_documents,
            accuracy_a=r.accuracy_a,
            accuracy_b=r.accuracy_b,
            difference=r.accuracy_difference.estimate,
            low=r.accuracy_difference.low,
            high=r.accuracy_difference.high,
            test=test,
            p_value=float(p),
            p_adjusted=float(adj),
            significant=bool(rej),
        )
        for (key, r, test, p), adj, rej in zip(rows, adjusted, reject)
    )


WORDING_AWARE = "wording-aware"
"""A difference's variance with the covariance a question's shared wording makes (measured by rewording)."""
BLIND = "document-clustered, blind to wording"
"""A difference's variance clustered by document only: the runs did not measure the wording."""


@dataclass(frozen=True)
class NonInferiority(Figures):
    """`examiner gate`'s decision: NEW passes when the one-sided (1 - alpha) lower bound of NEW - BASE
    lies above -margin. `power` is the chance of passing if NEW were truly as good as BASE."""

    passed: bool
    difference: float
    lower_bound: float
    margin: float
    alpha: float
    p_value: float
    power: float
    standard_error: float
    method: str
    small_sample: bool
    n_units: int
    n_documents: int
    smallest_margin: float = math.nan
    """The smallest margin these runs support (module function `smallest_margin`): a NEW measured as
    good as BASE passes only above it, a run held against itself included."""
    wording_variance: float = 0.0
    """Variance added for the questions' wording (examiner.stats.wording.wording_aware_variance) when the
    runs measured it (`--paraphrases`); 0: none found, or blind to wording (see `variance`)."""
    variance: str = BLIND
    """Which variance the bound used: WORDING_AWARE when the runs measured the questions' wording (even
    if it added nothing), BLIND (document-clustered only) when they did not."""

    @property
    def below_smallest(self) -> bool:
        """True when the margin asked for is one even NEW = BASE could not pass on this sample."""
        return math.isfinite(self.smallest_margin) and self.margin <= self.smallest_margin

    def variance_text(self) -> str:
        """Which variance the bound used, in words (the CI line's and compare's)."""
        if self.variance == WORDING_AWARE:
            return f"{WORDING_AWARE} (+{self.wording_variance:.2g}, measured by rewording)"
        return f"{BLIND} (no --paraphrases in the runs)"

    def line(self) -> str:
        """One line for a CI log; it names the smallest margin these runs support, and says so when the
        margin asked for lies below it."""
        verdict = "PASS" if self.passed else "FAIL"
        hint = ""
        if not self.passed and self.below_smallest:
            hint = (f"; margin {self.margin:.3f} is not above the smallest these runs can support: a NEW "
                    "measured as good as BASE fails it too (more units and documents lower it)")
        return (
            f"{verdict}: new - base = {self.difference:+.3f}, one-sided {1 - self.alpha:.0%} lower bound "
            f"{self.lower_bound:+.3f} vs margin -{self.margin:.3f}; power {self.power:.2f} "
            f"({self.n_units} units, {self.n_documents} documents{', small sample' if self.small_sample else ''}); "
            f"smallest margin these runs can support: {margin_text(self.smallest_margin)}{hint}"
            + f"; variance: {self.variance_text()}"
        )


def non_inferiority(
    base: Sequence[Outcome],
    new: Sequence[Outcome],
    documents: Sequence[Hashable],
    margin: float,
    clusters: Sequence[Hashable] | None = None,
    *,
    alpha: float = 0.05,
    wording_variance: float = math.nan,
) -> NonInferiority:
    """Is NEW not worse than BASE by more than `margin` (accuracy, absolute) at level `alpha`? H0: NEW -
    BASE <= -margin. The lower bound is the low end of the paired interval at level 1 - 2 alpha
    (examiner.stats.intervals.paired_interval); p-value and power from the same standard error on
    documents - 1 df, so the p-value is below alpha exactly when the bound passes. `wording_variance`
    (measured by rewording; examiner.stats.wording) is added to the squared standard error, and the bound
    is then estimate - t x that error; nan (not measured) leaves the decision blind to wording."""
    if margin < 0:
        raise ValueError("the margin is a non-negative accuracy difference")
    if not 0 < alpha < 0.5:
        raise ValueError("alpha must be in (0, 0.5)")
    result = compare_paired(base, new, documents, clusters, level=1 - 2 * alpha, alpha=alpha)
    d = result.accuracy_difference
    df = result.clustered_test.df
    se = d.standard_error
    low = d.low
    added = wording_variance if math.isfinite(wording_variance) and wording_variance > 0 else 0.0
    if added and math.isfinite(d.estimate):
        se = math.sqrt(se**2 + added)
        low = max(-1.0, d.estimate - t_ppf(1 - alpha, df) * se)
    p_value = t_sf((d.estimate + margin) / se, df) if se > 0 else float(d.estimate + margin <= 0)
    return NonInferiority(
        passed=bool(low > -margin),
        difference=d.estimate,
        lower_bound=low,
        margin=margin,
        alpha=alpha,
        p_value=p_value,
        power=power_at(margin, se, alpha, df, sides=1) if margin > 0 else alpha,
        standard_error=se,
        method=d.method,
        small_sample=d.small_sample,
        n_units=result.n_units,
        n_documents=result.n_documents,
        smallest_margin=smallest_margin(d.estimate, low),
        wording_variance=added,
        variance=WORDING_AWARE if math.isfinite(wording_variance) else BLIND,
    )
