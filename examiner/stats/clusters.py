"""Units grouped by source document, and by exam cluster within a document: integer codes, totals per
group, cluster-bootstrap resamples of those totals, the linearised (cluster-robust) variance of a ratio,
and the intraclass correlation.

Why one module: the paired comparison, the small-sample intervals and the planner all treat the same
nesting (unit < exam cluster < document) the same way; the document is the top stage, the independent
unit of the design (units of one document share its topic and its difficulty, so their verdicts are
correlated).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Grouping",
    "grouping",
    "totals_by",
    "bootstrap_totals",
    "ratio_residuals",
    "robust_variance",
    "icc_anova",
]


@dataclass(frozen=True)
class Grouping:
    """Integer codes of each unit's top-stage group (`document`) and second-stage group (`cluster`, unique
    across documents), and the document of each cluster. `top_stage` says what the documents are: the
    source documents, or the exam clusters when all units come from one document."""

    document: np.ndarray
    cluster: np.ndarray
    cluster_document: np.ndarray
    n_documents: int
    n_clusters: int
    top_stage: str

    @property
    def n_units(self) -> int:
        return int(self.document.size)


def _codes(values: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return codes, len(index)


def grouping(documents: Sequence[Hashable], clusters: Sequence[Hashable] | None = None) -> Grouping:
    """Codes for units given their document and (optionally) exam cluster ids.

    A cluster id is taken within its document (the same id in two documents names two clusters). Without
    cluster ids each unit is its own cluster. When every unit comes from one document and clusters are
    given, the clusters become the top stage: one document gives no between-document replication, and the
    exam clusters are then the best independent groups there are.
    """
    n = len(documents)
    if n == 0:
        raise ValueError("no units")
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"{n} documents but {len(clusters)} cluster ids: one of each per unit")
    doc, n_doc = _codes(documents)
    if clusters is None:
        cluster, n_cluster = np.arange(n, dtype=np.int64), n
    else:
        cluster, n_cluster = _codes(list(zip(documents, clusters)))
    top_stage = "documents"
    if n_doc == 1 and clusters is not None and n_cluster > 1:
        doc, n_doc, top_stage = cluster.copy(), n_cluster, "clusters"
    cluster_document = np.zeros(n_cluster, dtype=np.int64)
    cluster_document[cluster] = doc
    return Grouping(doc, cluster, cluster_document, n_doc, n_cluster, top_stage)


def totals_by(codes: np.ndarray, n_groups: int, columns: np.ndarray) -> np.ndarray:
    """Column sums per group: (n_groups, k) from per-unit columns (n_units, k)."""
    out = np.zeros((n_groups, columns.shape[1]))
    np.add.at(out, codes, columns)
    return out


def bootstrap_totals(
    g: Grouping,
    columns: np.ndarray,
    n_resamples: int,
    seed: int,
    *,
    two_stage: bool = False,
    chunk: int = 250,
) -> np.ndarray:
    """Column totals of `n_resamples` cluster-bootstrap samples: (n_resamples, k).

    One stage (default): draw the documents with replacement, as many as there are; a resample's totals
    are the sums of the drawn documents' totals. Two stages (`two_stage=True`): within each drawn document,
    draw its exam clusters with replacement too (Davison & Hinkley 1997, section 3.8). The second stage
    adds the within-document variation a second time, since the document totals already carry it, so it
    errs wide; it is offered for designs with few documents of many clusters. Resamples are drawn in
    chunks so memory stays at chunk x groups whatever the size.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, columns.shape[1]))
    if not two_stage:
        doc_totals = totals_by(g.document, g.n_documents, columns)
        uniform = np.full(g.n_documents, 1.0 / g.n_documents)
        for start in range(0, n_resamples, chunk):
            stop = min(start + chunk, n_resamples)
            counts = rng.multinomial(g.n_documents, uniform, size=stop - start).astype(float)
            out[start:stop] = counts @ doc_totals
        return out
    cluster_totals = totals_by(g.cluster, g.n_clusters, columns)
    order = np.argsort(g.cluster_document, kind="stable")  # clusters listed document by document
    size = np.bincount(g.cluster_document, minlength=g.n_documents)
    first = np.concatenate(([0], np.cumsum(size)[:-1]))
    widest = int(size.max())
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        rows = stop - start
        docs = rng.integers(0, g.n_documents, size=(rows, g.n_documents))
        slot_size = size[docs][..., None]  # (rows, D, 1)
        pick = np.floor(rng.random((rows, g.n_documents, widest)) * slot_size).astype(np.int64)
        valid = np.arange(widest)[None, None, :] < slot_size
        chosen = order[first[docs][..., None] + pick]  # cluster codes
        row = np.broadcast_to(np.arange(rows)[:, None, None], chosen.shape)
        counts = np.zeros((rows, g.n_clusters))
        np.add.at(counts, (row[valid], chosen[valid]), 1.0)
        out[start:stop] = counts @ cluster_totals
    return out


def ratio_residuals(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Linearised influence of each group on the ratio R = sum(numerator) / sum(denominator):
    (y_i - R n_i) / sum(n). Zeros when the denominator sums to zero (the ratio is undefined there)."""
    total = float(denominator.sum())
    if total == 0:
        return np.zeros_like(numerator, dtype=float)
    ratio = float(numerator.sum()) / total
    return (numerator - ratio * denominator) / total


def robust_variance(residuals: np.ndarray) -> float:
    """Cluster-robust variance of a statistic from its per-group linearised residuals: G/(G-1) sum(r_i^2)
    (the CR1 small-sample factor; Cameron & Miller 2015). Zero for a single group: nothing to compare."""
    groups = residuals.size
    if groups < 2:
        return 0.0
    return float(groups / (groups - 1) * np.sum(residuals**2))


def icc_anova(values: np.ndarray, groups: np.ndarray) -> float:
    """Intraclass correlation of `values` within `groups` (integer codes), by the one-way ANOVA estimator
    for unequal group sizes (Donner 1986): (MSB - MSW) / (MSB + (n0 - 1) MSW), n0 = (N - sum n_i^2 / N) /
    (G - 1). Clipped at 0 from below (a negative estimate means no detectable clustering); nan with fewer
    than two groups or no within-group replication; 0 when the values are constant."""
    values = np.asarray(values, dtype=float)
    _, groups = np.unique(groups, return_inverse=True)
    n_groups = int(groups.max()) + 1 if groups.size else 0
    n = values.size
    if n_groups < 2 or n <= n_groups:
        return float("nan")
    size = np.bincount(groups, minlength=n_groups).astype(float)
    mean = values.mean()
    group_mean = np.bincount(groups, weights=values, minlength=n_groups) / size
    ssb = float(np.sum(size * (group_mean - mean) ** 2))
    ssw = float(np.sum((values - group_mean[groups]) ** 2))
    msb = ssb / (n_groups - 1)
    msw = ssw / (n - n_groups)
    n0 = (n - float(np.sum(size**2)) / n) / (n_groups - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator <= 0:
        return 0.0
    return float(max(0.0, (msb - msw) / denominator))
