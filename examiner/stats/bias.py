"""The judge bias audit's statistics (docs/STATISTICS.md, "Judge bias audit"): position flips under swap,
the slope of verdicts against answer length, self-preference (same model or family) with the judge's gap
between its own family and the others, and a panel's pairwise and overall agreement.

Why one module: the exam, judging and meta-evaluation reports each audit their judge with the same four
figures, read from different records; the figures themselves (and their intervals and flags) are the same.
Each function takes plain arrays; the callers decide what a unit, a group and a verdict are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from examiner.stats.clusters import bootstrap_totals, grouping
from examiner.stats.correlation import Figures, percentile_interval
from examiner.stats.intervals import is_small_sample, t_interval

__all__ = [
    "FlipRate",
    "LengthSlope",
    "SelfGap",
    "KappaPair",
    "PanelAgreement",
    "MIN_LENGTH_UNITS",
    "LENGTH_PER",
    "flip_rate",
    "length_slope",
    "model_family",
    "self_match",
    "self_gap",
    "panel_agreement",
]

LEVEL = 0.95
LENGTH_PER = 100
"""The length slope is per this many tokens (a slope of 0.05: 100 more tokens, 5 points more favourable)."""
MIN_LENGTH_UNITS = 10
"""Fewer judged answers than this, or fewer than two distinct lengths, and the slope is not measured."""
FLIP_FLAG = 0.10
"""A flip rate whose interval lies wholly above this share of pairs is flagged."""
BOOTSTRAP = 2000


def _small_sample(estimate: float, resampled: np.ndarray, unit_se: float, n_groups: int,
                  level: float) -> tuple[float, float]:
    """Below SMALL_SAMPLE_GROUPS groups the percentile bootstrap under-covers (examiner.stats.intervals):
    estimate +- t on groups - 1 df times the larger of the bootstrap's and the units' standard error."""
    boot_se = float(np.std(resampled, ddof=1)) if resampled.size > 1 else 0.0
    return t_interval(estimate, max(boot_se, unit_se), max(n_groups - 1, 1), level)


@dataclass(frozen=True)
class FlipRate(Figures):
    """Pairs judged in both orders whose identity-level verdict changed with the order (a flip), with a
    Wilson interval; flagged when the whole interval lies above FLIP_FLAG."""

    pairs: int
    flips: int
    rate: float
    low: float
    high: float
    flagged: bool


def flip_rate(flips: int, pairs: int, *, level: float = LEVEL, flag_above: float = FLIP_FLAG) -> FlipRate:
    """The share `flips / pairs` with its Wilson interval (pairs are independent draws of the judge)."""
    if pairs <= 0:
        raise ValueError("no pair was judged in both orders")
    if not 0 <= flips <= pairs:
        raise ValueError(f"flips must lie in 0..{pairs}, got {flips}")
    low, high = proportion_confint(flips, pairs, alpha=1 - level, method="wilson")
    return FlipRate(pairs, flips, flips / pairs, float(low), float(high), bool(low > flag_above))


@dataclass(frozen=True)
class LengthSlope(Figures):
    """Change of the verdict (1 = favourable, 0 = not; or a score) per LENGTH_PER tokens of answer, from a
    linear model with cluster-robust standard errors; flagged when the interval excludes 0."""

    n: int
    groups: int
    slope: float
    low: float
    high: float
    p_value: float
    flagged: bool
    method: str


def length_slope(outcome: Sequence[float], length: Sequence[float], groups: Sequence[Hashable] | None = None,
                 strata: Sequence[Hashable] | None = None, *, per: float = LENGTH_PER,
                 level: float = LEVEL) -> LengthSlope:
    """Ordinary least squares of `outcome` on `length / per` (a linear probability model for 0/1 outcomes),
    with a fixed effect per stratum (e.g. per target, so a better target's longer answers are not read as
    the judge's taste), and standard errors robust to clustering within `groups` (e.g. source documents;
    t with groups - 1 degrees of freedom). Without groups, or with every unit its own group, HC1 errors."""
    import statsmodels.api as sm

    y = np.asarray(outcome, dtype=float)
    x = np.asarray(length, dtype=float) / per
    if y.shape != x.shape:
        raise ValueError("outcome and length must have one value per unit")
    n = int(y.size)
    if n < MIN_LENGTH_UNITS:
        raise ValueError(f"{n} judged answers: the slope needs at least {MIN_LENGTH_UNITS}")
    if np.unique(x).size < 2:
        raise ValueError("every answer has the same length")
    columns = [np.ones(n), x]
    if strata is not None:
        levels = list(dict.fromkeys(strata))
        columns += [np.array([s == level for s in strata], dtype=float) for level in levels[1:]]
    codes = grouping(list(groups)).document if groups is not None else np.arange(n)
    n_groups = int(np.unique(codes).size)
    model = sm.OLS(y, np.column_stack(columns))
    if np.unique(y).size < 2:  # the judge gave one verdict throughout: no slope to see, and no error either
        return LengthSlope(n, n_groups, 0.0, 0.0, 0.0, 1.0, False, "constant verdicts")
    units = model.fit(cov_type="HC1", use_t=True)
    slope = float(units.params[1])
    if 1 < n_groups < n:
        fit = model.fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
        se = float(fit.bse[1])
        method = f"linear model, cluster-robust SE over {n_groups} groups (t, {n_groups - 1} df)"
        if is_small_sample(n_groups) and float(units.bse[1]) > se:
            se = float(units.bse[1])
            method += ", the units' HC1 SE being larger"
        low, high = t_interval(slope, se, n_groups - 1, level)
        p = float(2 * sps.t.sf(abs(slope) / se, n_groups - 1)) if se > 0 else 1.0
    else:
        low, high = (float(v) for v in np.asarray(units.conf_int(alpha=1 - level))[1])
        p = float(units.pvalues[1])
        method = "linear model, HC1 robust SE (independent units)"
    return LengthSlope(n, n_groups, slope, low, high, p, bool(low > 0 or high < 0), method)


_DATE = re.compile(r"^\d{4}-?\d{2}-?\d{2}$|^\d{4}$|^\d{6,8}$")
_SIZE = re.compile(r"^(x\d+)?\d+(\.\d+)?[bmkt]$|^a\d+(\.\d+)?b$|^\d+x\d+(\.\d+)?b$|^e\d+b$")
_VERSION = re.compile(r"^v\d+(\.\d+)*$")
VARIANTS = frozenset({"mini", "nano", "micro", "small", "medium", "large", "xl", "xxl", "base", "instruct", "chat",
                      "it", "hf", "turbo", "preview", "latest", "exp", "experimental", "fp8", "fp16", "bf16", "int4",
                      "int8", "awq", "gptq", "gguf", "q4", "q8", "flash", "lite", "pro", "plus", "max", "sonnet",
                      "haiku", "opus", "online", "distill"})
"""Name parts that tell models of one family apart (size, tuning, quantisation, tier, date, version)."""


def _parts(name: str) -> list[str]:
    bare = name.strip().lower().rsplit("/", 1)[-1]  # drop a provider or organisation prefix (meta-llama/...)
    bare = bare.split(":", 1)[0] if re.search(r":\d", bare) is None else bare.replace(":", "-")
    bare = re.sub(r"[-_]\d{4}-\d{2}-\d{2}$", "", bare)  # a dated release (gpt-4o-2024-08-06)
    return [p for p in re.split(r"[-_\s]+", bare) if p]


def model_family(name: str) -> str:
    """The family of a model name: lower case, without provider prefix, and without the parts that name a
    size, a tuning, a tier, a date or a version (gpt-4o-mini -> gpt-4o, Llama-3.1-70B-Instruct -> llama-3.1,
    claude-3-5-sonnet-20241022 -> claude-3-5). Empty names give an empty family."""
    kept = [p for p in _parts(name) if not (_DATE.match(p) or _SIZE.match(p) or _VERSION.match(p) or p in VARIANTS)]
    return "-".join(kept) or "-".join(_parts(name))


def self_match(judge: str, target: str) -> str | None:
    """"same model" when the normalised names are equal, "same family" when their families are, else None."""
    a, b = "-".join(_parts(judge)), "-".join(_parts(target))
    if not a or not b:
        return None
    if a == b:
        return "same model"
    return "same family" if model_family(judge) == model_family(target) else None


@dataclass(frozen=True)
class SelfGap(Figures):
    """A judge's mean verdict on answers of its own model or family minus on the others', with a
    cluster-bootstrap percentile interval (groups resampled); flagged when the interval excludes 0."""

    n_self: int
    n_other: int
    self_mean: float
    other_mean: float
    gap: float
    low: float
    high: float
    groups: int
    flagged: bool
    method: str


def self_gap(outcome: Sequence[float], is_self: Sequence[bool], groups: Sequence[Hashable] | None = None, *,
             level: float = LEVEL, n_resamples: int = BOOTSTRAP, seed: int = 0) -> SelfGap:
    """mean(outcome | self) - mean(outcome | other), resampling `groups` (source documents shared by both
    sides keep the pairing) or units when none are given."""
    y = np.asarray(outcome, dtype=float)
    s = np.asarray(is_self, dtype=bool)
    if y.shape != s.shape:
        raise ValueError("outcome and is_self must have one value per unit")
    n_self, n_other = int(s.sum()), int((~s).sum())
    if not n_self or not n_other:
        raise ValueError("the gap needs answers of both the judge's own family and of others")
    columns = np.column_stack([y * s, s, y * ~s, ~s]).astype(float)
    g = grouping(list(groups) if groups is not None else list(range(y.size)))
    totals = bootstrap_totals(g, columns, n_resamples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        diffs = totals[:, 0] / totals[:, 1] - totals[:, 2] / totals[:, 3]
    diffs = diffs[np.isfinite(diffs)]
    self_mean, other_mean = float(y[s].mean()), float(y[~s].mean())
    gap = self_mean - other_mean
    if is_small_sample(g.n_documents):
        unit_se = math.sqrt(np.var(y[s], ddof=1 if n_self > 1 else 0) / n_self
                            + np.var(y[~s], ddof=1 if n_other > 1 else 0) / n_other)
        low, high = _small_sample(gap, diffs, unit_se, g.n_documents, level)
        method = f"small sample: t on {g.n_documents - 1} df, larger of the cluster-bootstrap and unit SE"
    else:
        low, high = (float(v) for v in percentile_interval(diffs, 1 - level)) if diffs.size else (math.nan, math.nan)
        method = f"cluster bootstrap over {g.n_documents} groups, percentile"
    return SelfGap(n_self, n_other, self_mean, other_mean, gap, low, high, g.n_documents, bool(low > 0 or high < 0),
                   method)


@dataclass(frozen=True)
class KappaPair(Figures):
    """Cohen's kappa of two panel members on the units both labelled, with its interval (`method`)."""

    a: str
    b: str
    n: int
    agreement: float
    kappa: float
    low: float
    high: float
    method: str


@dataclass(frozen=True)
class PanelAgreement(Figures):
    """Every pair of members' Cohen's kappa, and Fleiss' kappa over the units every member labelled."""

    members: tuple[str, ...]
    pairs: tuple[KappaPair, ...]
    fleiss_n: int
    fleiss_kappa: float


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    from sklearn.metrics import cohen_kappa_score

    if np.unique(np.concatenate([a, b])).size < 2:
        return 1.0  # one label throughout: no disagreement for chance to explain
    return float(cohen_kappa_score(a, b))


def _kappa_interval(a: np.ndarray, b: np.ndarray, groups: np.ndarray, level: float, n_resamples: int,
                    seed: int) -> tuple[float, float, str]:
    """Percentile interval of Cohen's kappa over cluster-bootstrap resamples of the groups (each resample's
    confusion table is the sum of the drawn groups' tables); below SMALL_SAMPLE_GROUPS groups, t on
    groups - 1 df times the larger of the bootstrap's and the asymptotic (units independent) error."""
    k = int(max(a.max(), b.max())) + 1
    cells = np.zeros((a.size, k * k))
    cells[np.arange(a.size), a * k + b] = 1.0
    tables = bootstrap_totals(grouping(list(groups)), cells, n_resamples, seed).reshape(-1, k, k)
    n = tables.sum(axis=(1, 2))
    observed = np.trace(tables, axis1=1, axis2=2) / n
    chance = np.einsum("ri,ri->r", tables.sum(axis=2), tables.sum(axis=1)) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappas = np.where(chance >= 1.0, 1.0, (observed - chance) / (1.0 - chance))
    kappas = kappas[np.isfinite(kappas)]
    n_groups = int(np.unique(groups).size)
    if is_small_sample(n_groups):
        low, high = _small_sample(_kappa(a, b), kappas, _kappa_unit_se(a, b), n_groups, level)
        return max(low, -1.0), min(high, 1.0), f"small sample: t on {max(n_groups - 1, 1)} df"
    method = f"cluster bootstrap over {n_groups} groups, percentile"
    if not kappas.size:
        return math.nan, math.nan, method
    low, high = percentile_interval(kappas, 1 - level)
    return float(low), float(high), method


def _kappa_unit_se(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa's asymptotic standard error with the units independent (statsmodels)."""
    from statsmodels.stats.inter_rater import cohens_kappa

    k = int(max(a.max(), b.max())) + 1
    table = np.zeros((k, k))
    np.add.at(table, (a, b), 1.0)
    if np.count_nonzero(table.sum(axis=0)) < 2 and np.count_nonzero(table.sum(axis=1)) < 2:
        return 0.0
    with np.errstate(invalid="ignore", divide="ignore"):  # a table with an empty row or column: nan, handled below
        se = float(cohens_kappa(table).std_kappa)
    return se if math.isfinite(se) else 0.0


def panel_agreement(labels: Mapping[str, Mapping[Hashable, Hashable | None]],
                    groups: Mapping[Hashable, Hashable] | None = None, *, level: float = LEVEL,
                    n_resamples: int = 1000, seed: int = 0) -> PanelAgreement:
    """`labels`: member -> unit -> label (None: the member gave none). Cohen's kappa per pair over the
    units both labelled (sklearn), its interval resampling `groups` of units (unit -> group; default each
    unit its own); Fleiss' kappa (statsmodels) over the units every member labelled."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    members = tuple(labels)
    if len(members) < 2:
        raise ValueError("panel agreement needs at least two members")
    codes: dict[Hashable, int] = {}
    pairs = []
    for index, (a, b) in enumerate(combinations(members, 2)):
        units = [u for u, v in labels[a].items() if v is not None and labels[b].get(u) is not None]
        if not units:
            pairs.append(KappaPair(a, b, 0, math.nan, math.nan, math.nan, math.nan, "no unit labelled by both"))
            continue
        x = np.array([codes.setdefault(labels[a][u], len(codes)) for u in units])
        y = np.array([codes.setdefault(labels[b][u], len(codes)) for u in units])
        group_codes: dict[Hashable, int] = {}
        grp = np.array([group_codes.setdefault(groups.get(u, u) if groups else u, len(group_codes)) for u in units])
        low, high, method = _kappa_interval(x, y, grp, level, n_resamples, seed + index)
        pairs.append(KappaPair(a, b, len(units), float(np.mean(x == y)), _kappa(x, y), low, high, method))
    common = [u for u in labels[members[0]] if all(labels[m].get(u) is not None for m in members)]
    fleiss = math.nan
    if common:
        table = np.array([[codes.setdefault(labels[m][u], len(codes)) for m in members] for u in common])
        counts, _ = aggregate_raters(table)
        fleiss = 1.0 if counts.shape[1] < 2 else float(fleiss_kappa(counts, method="fleiss"))
    return PanelAgreement(members, tuple(pairs), len(common), fleiss)
