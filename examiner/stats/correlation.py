"""Correlations between a metric and human judgements, and a cluster bootstrap.

Why this module exists: every meta-evaluation in the project (classic metrics on SummEval, G-Eval,
judge rankings, exam accuracy) reduces to "how well does score A track score B" or "how sure are we of
this figure". Keeping the three correlation levels and the bootstrap in one place makes the
definitions identical across experiments.

Correlation levels (SummEval conventions):
- sample level: one correlation over all items;
- summary level: per document, correlate over that document's items; documents where either side is
  constant are skipped (a correlation is undefined there), the rest are averaged (G-Eval protocol);
- system level: average each system's scores first, then correlate the system means.
Kendall's tau is tau-b throughout (ties-corrected), as scipy computes it by default.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = [
    "Figures",
    "Correlation",
    "GroupedCorrelation",
    "BootstrapCI",
    "pearson",
    "spearman",
    "kendall",
    "sample_level",
    "summary_level",
    "system_level",
    "levels",
    "bootstrap_ci",
    "percentile_interval",
    "weighted_mean",
    "weighted_ratio",
    "cohen_kappa",
]


class Figures:
    """Mixin for the frozen dataclasses of computed figures (here and in the rankings): reports take them
    as plain dicts."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Correlation(Figures):
    """Pearson r, Spearman rho and Kendall tau-b over n paired values (nan where undefined)."""

    pearson: float
    spearman: float
    kendall: float
    n: int
    pearson_low: float = float("nan")
    """95 % Fisher-z interval of each coefficient (examiner.stats.agreement_intervals)."""
    pearson_high: float = float("nan")
    spearman_low: float = float("nan")
    spearman_high: float = float("nan")
    kendall_low: float = float("nan")
    kendall_high: float = float("nan")


def with_intervals(pearson_r: float, spearman_rho: float, kendall_tau: float, n: int) -> Correlation:
    """The three coefficients over n pairs with their 95 % Fisher-z intervals."""
    from examiner.stats.agreement_intervals import fisher_interval

    p, s, k = (fisher_interval(r, n, kind) for r, kind in
               ((pearson_r, "pearson"), (spearman_rho, "spearman"), (kendall_tau, "kendall")))
    return Correlation(pearson_r, spearman_rho, kendall_tau, n, *p, *s, *k)


@dataclass(frozen=True)
class GroupedCorrelation(Figures):
    """Mean of per-group correlations; says how many groups were usable and how many were skipped."""

    pearson: float
    spearman: float
    kendall: float
    n_groups_used: int
    n_groups_skipped: int


@dataclass(frozen=True)
class BootstrapCI(Figures):
    """Point estimate on the original data and a percentile interval from cluster resamples.

    n_valid counts resamples whose statistic was finite (a ratio can be undefined in a resample that
    happens to draw only empty clusters); the interval is taken over those.
    """

    estimate: float
    low: float
    high: float
    alpha: float
    n_resamples: int
    n_valid: int
    n_clusters: int


def _pair(metric: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(metric, dtype=float)
    y = np.asarray(human, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"metric and human must be 1-D and the same length, got {x.shape} and {y.shape}")
    return x, y


def _constant(x: np.ndarray) -> bool:
    return x.size == 0 or bool(np.all(x == x[0]))


def _scipy_stats() -> Any:
    """scipy.stats, imported when a correlation is computed: this module's Figures and intervals are
    imported by every figure-reading command, which need not pay for scipy.stats."""
    from scipy import stats

    return stats


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson r; nan when fewer than 2 items or either side is constant."""
    a, b = _pair(x, y)
    if a.size < 2 or _constant(a) or _constant(b):
        return float("nan")
    return float(_scipy_stats().pearsonr(a, b)[0])


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman rho (average ranks for ties); nan when undefined."""
    a, b = _pair(x, y)
    if a.size < 2 or _constant(a) or _constant(b):
        return float("nan")
    return float(_scipy_stats().spearmanr(a, b)[0])


def kendall(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall tau-b (ties corrected on both sides); nan when undefined."""
    a, b = _pair(x, y)
    if a.size < 2 or _constant(a) or _constant(b):
        return float("nan")
    return float(_scipy_stats().kendalltau(a, b, variant="b")[0])


def sample_level(metric: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray) -> Correlation:
    """One correlation over all items, ignoring any grouping."""
    x, y = _pair(metric, human)
    return with_intervals(pearson(x, y), spearman(x, y), kendall(x, y), int(x.size))


def _group_index(groups: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    index: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        index.setdefault(g, []).append(i)
    return index


def summary_level(
    metric: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    groups: Sequence[Hashable],
) -> GroupedCorrelation:
    """Per-document correlation averaged over documents (G-Eval / SummEval summary level).

    A document is skipped when the metric or the human score is constant over its items (or it has
    fewer than two items): the correlation is undefined there, and counting it as 0 would bias the
    average. The same documents are skipped for all three coefficients so they stay comparable.
    """
    x, y = _pair(metric, human)
    if len(groups) != x.size:
        raise ValueError("groups must have one entry per item")
    sums = np.zeros(3)
    used = skipped = 0
    for idx in _group_index(groups).values():
        gx, gy = x[idx], y[idx]
        if gx.size < 2 or _constant(gx) or _constant(gy):
            skipped += 1
            continue
        sps = _scipy_stats()
        sums += (
            sps.pearsonr(gx, gy)[0],
            sps.spearmanr(gx, gy)[0],
            sps.kendalltau(gx, gy, variant="b")[0],
        )
        used += 1
    if used == 0:
        nan = float("nan")
        return GroupedCorrelation(nan, nan, nan, 0, skipped)
    p, s, k = (float(v) for v in sums / used)
    return GroupedCorrelation(p, s, k, used, skipped)


def system_level(
    metric: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    systems: Sequence[Hashable],
) -> Correlation:
    """Average each system's metric and human scores, then correlate the means (n = number of systems)."""
    x, y = _pair(metric, human)
    if len(systems) != x.size:
        raise ValueError("systems must have one entry per item")
    index = _group_index(systems)
    mx = np.array([x[idx].mean() for idx in index.values()])
    my = np.array([y[idx].mean() for idx in index.values()])
    return with_intervals(pearson(mx, my), spearman(mx, my), kendall(mx, my), len(index))


def levels(
    metric: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    groups: Sequence[Hashable | None] | None = None,
    systems: Sequence[Hashable | None] | None = None,
) -> dict[str, dict[str, Any]]:
    """{"sample", "summary", "system"} -> figures (as dicts): sample level always; summary level when every
    item names its group (input document), system level when every item names its system."""
    out: dict[str, dict[str, Any]] = {"sample": sample_level(metric, human).to_dict()}
    if groups and all(g is not None for g in groups):
        out["summary"] = summary_level(metric, human, groups).to_dict()  # type: ignore[arg-type]
    if systems and all(s is not None for s in systems):
        out["system"] = system_level(metric, human, systems).to_dict()  # type: ignore[arg-type]
    return out


# ----------------------------------------------------------------------------------------------
# Cluster bootstrap
# ----------------------------------------------------------------------------------------------


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Vectorised stat for `bootstrap_ci(..., weighted=True)`: mean of 1-D values per resample."""
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights @ values) / total


def weighted_ratio(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Vectorised stat: sum(column 0) / sum(column 1) per resample.

    Exam accuracy is a ratio of this kind: values[:, 0] = 1 if a verdict is correct,
    values[:, 1] = 1 if it is covered (correct or incorrect), so the ratio is correct / covered.
    """
    num = weights @ values[:, 0]
    den = weights @ values[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def percentile_interval(samples: np.ndarray, alpha: float, axis: int | None = None) -> tuple[Any, Any]:
    """(low, high): the alpha/2 and 1 - alpha/2 quantiles of bootstrap samples (along `axis`)."""
    low, high = np.quantile(samples, [alpha / 2, 1 - alpha / 2], axis=axis)
    return low, high


def bootstrap_ci(
    values_by_cluster: Mapping[Hashable, Any] | Sequence[Any],
    stat_fn: Callable[..., Any],
    n: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    *,
    weighted: bool = False,
) -> BootstrapCI:
    """Percentile bootstrap that resamples whole clusters with replacement.

    Why clusters: items inside a cluster (e.g. the KUs behind one question) are not independent, so
    resampling items would understate the uncertainty. Each cluster holds an array of items
    (shape (m,) or (m, k)); all clusters are stacked into one flat array.

    Two calling conventions:
    - weighted=False (generic): `stat_fn(values) -> float` is called once per resample on the
      concatenated items of the drawn clusters (index building is vectorised; ~1 ms per resample for
      a few thousand items).
    - weighted=True (fast): `stat_fn(values, weights) -> array(n,)` is called once; `weights[r, i]`
      is how many times item i's cluster was drawn in resample r, which is exactly equivalent to
      concatenating the draws for any statistic that is a function of the weighted sample
      (`weighted_mean`, `weighted_ratio`).
    The point estimate is stat_fn on the original data.
    """
    clusters = list(values_by_cluster.values()) if isinstance(values_by_cluster, Mapping) else list(values_by_cluster)
    if not clusters:
        raise ValueError("bootstrap_ci needs at least one cluster")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    arrays = [np.asarray(c, dtype=float) for c in clusters]
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    values = np.concatenate(arrays, axis=0)
    n_clusters = len(arrays)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(n, n_clusters))

    if weighted:
        item_cluster = np.repeat(np.arange(n_clusters), sizes)
        counts = np.zeros((n, n_clusters))
        np.add.at(counts, (np.repeat(np.arange(n), n_clusters), draws.ravel()), 1.0)
        weights = counts[:, item_cluster]
        estimate = float(np.asarray(stat_fn(values, np.ones((1, values.shape[0]))))[0])
        stats_arr = np.asarray(stat_fn(values, weights), dtype=float)
    else:
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        estimate = float(stat_fn(values))
        stats_arr = np.empty(n)
        for r in range(n):
            chosen = draws[r]
            lengths = sizes[chosen]
            total = int(lengths.sum())
            # item indices of the drawn clusters, concatenated: start of each block + position in block
            block_start = np.repeat(offsets[chosen], lengths)
            pos_in_block = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            stats_arr[r] = stat_fn(values[block_start + pos_in_block])

    finite = stats_arr[np.isfinite(stats_arr)]
    if finite.size == 0:
        low = high = float("nan")
    else:
        low, high = (float(v) for v in percentile_interval(finite, alpha))
    return BootstrapCI(estimate, low, high, alpha, n, int(finite.size), n_clusters)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels on the same items: (observed - chance agreement) / (1 - chance),
    chance from each rater's own label shares. 1.0 when both give one and the same label throughout (no
    disagreement possible to correct for); nan when there are no items."""
    if len(a) != len(b):
        raise ValueError(f"raters label different numbers of items: {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return float("nan")
    observed = sum(x == y for x, y in zip(a, b)) / n
    labels = set(a) | set(b)
    chance = sum((list(a).count(label) / n) * (list(b).count(label) / n) for label in labels)
    if chance >= 1.0:
        return 1.0 if observed == 1.0 else float("nan")
    return float((observed - chance) / (1.0 - chance))
