"""Every pair of rows whose dot product reaches a threshold, found exactly without comparing every pair in
full: the search behind the near-duplicate merge (`examiner.corpus.units.near_duplicate_groups`).

Why: prepare merges units whose embeddings have cosine >= 0.95. Comparing every pair in 384 dimensions is
n * n * 384 work: at 219,204 units, 737 s of CPU on 2 cores, a third of a 200,000-unit exam's own CPU.
This search found the same pairs in 82 s (experiments/bench_near_duplicates.py; docs/MEASUREMENTS.md,
"200,000 units, part 2").

How. The rows are assumed to have length at most 1 (unit rows, or zero rows). Then a . b >= t implies
|a - b|^2 <= 2 - 2t = r^2, and three filters, each of which never drops such a pair, leave few candidates:
1. Projection onto the first `dims` principal directions of a sample. The directions are orthonormal, so a
   projection never lengthens a distance: a qualifying pair is within r in the projection too.
2. K-means cells in the projection. A point b lies in its nearest centroid's cell j, so on c_j's side of
   the bisector between c_j and any other centroid c_i. A point a whose distance to that bisector,
   (|a - c_j|^2 - |a - c_i|^2) / (2 |c_i - c_j|) with c_i a's own centroid, exceeds r has no partner in j.
3. Inside each cell, the projected squared distance of every remaining (query, member) pair, kept when it
   is at most r^2.
Each bound carries a slack (ROUNDING) far above float32 rounding. The candidates are then decided by their
full dot product in float64, so the answer does not depend on the cells, the sample, the seed, block
shapes or BLAS kernels: it is the exact set of pairs. The cells only decide how much work that takes.

The work is still quadratic in the worst case (about half of the n * n / 2 projected pairs at 219,204 real
units fall in candidate cells), but each costs `dims + 2` multiply-adds instead of 384.
"""

from __future__ import annotations

import math

import numpy as np

PROJECTED_DIMS = 32
"""Principal directions kept by the projection. At 40,353 real units (all-MiniLM-L6-v2) the search took
4.5 s of CPU with 16, and 2.9 to 3.1 s with 24, 32, 48 or 64 (bench_near_duplicates.py --dims)."""

ROUNDING = 2e-4
"""Slack added to every squared-distance bound, covering rows of length 1 + 1e-6 and float32 rounding in
the projection, the centroid distances and the cell comparisons (each below 1e-5 here)."""

PCA_SAMPLE = 20_000
"""Rows (evenly spaced) from which the principal directions are computed."""

CELLS_FROM = 16_384
"""Fewest rows cut into k-means cells. Below it one cell is cheaper: every projected pair costs little
(20,000 rows: a few seconds either way), and FAISS's k-means has a fixed cost."""

BLOCK_VALUES = 2**24
"""Most (query, member) distances held at once (float32: 64 MB)."""

ROWS_AT_ONCE = 8192
"""Rows (or candidate pairs) turned into float64 at once: 8,192 x 384 x 8 bytes, 25 MB a copy. With 65,536
the search's traced peak at 219,204 units was 739 MB, most of it these copies."""


def close_pairs(rows: np.ndarray, threshold: float, *, dims: int = PROJECTED_DIMS,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(first, second): every pair of row indices with first < second and rows[first] . rows[second] >=
    threshold (computed in float64), each pair once, sorted. Rows must have length at most 1; the answer
    is the same for any `dims` and `seed`, which only change the time it takes."""
    x = np.ascontiguousarray(np.asarray(rows, dtype=np.float32))
    n = len(x)
    empty = np.zeros(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    longest = max(float(np.einsum("ij,ij->i", x[lo:lo + ROWS_AT_ONCE], x[lo:lo + ROWS_AT_ONCE]).max())
                  for lo in range(0, n, ROWS_AT_ONCE))
    if longest > 1 + 1e-5:
        raise ValueError(f"close_pairs needs rows of length at most 1; the longest is {math.sqrt(longest):.6f}")
    radius2 = max(0.0, 2.0 - 2.0 * float(threshold)) + ROUNDING
    p = _project(x, dims)
    own, centroids = _cells(p, seed)
    first, second = _candidates(p, own, centroids, radius2)
    return _decide(x, first, second, threshold)


def _project(x: np.ndarray, dims: int) -> np.ndarray:
    """float32 coordinates of x on its first `dims` principal directions: eigenvectors of a sample's
    covariance (cheaper than an SVD of the sample, which cost 0.7 s at 2,452 rows). The covariance may be
    rough (float32): its eigenvectors, from a float64 eigh, are orthonormal to double precision all the
    same, and orthonormality is all the bound needs."""
    sample = x[:: max(1, len(x) // PCA_SAMPLE)]
    mean = sample.mean(axis=0, dtype=np.float64)
    centred = sample - mean.astype(np.float32)
    _, vectors = np.linalg.eigh((centred.T @ centred).astype(np.float64))  # eigenvalues ascending
    basis = vectors[:, ::-1][:, :dims]
    out = np.empty((len(x), basis.shape[1]), dtype=np.float32)
    for lo in range(0, len(x), ROWS_AT_ONCE):
        out[lo:lo + ROWS_AT_ONCE] = (x[lo:lo + ROWS_AT_ONCE].astype(np.float64) - mean) @ basis
    return out


def _cells(p: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(own cell of each row, centroids): about sqrt(n) k-means cells of the projected rows, each row in
    its nearest centroid's cell (the bound in step 2 needs exactly that, not a good clustering); one cell
    below CELLS_FROM rows."""
    n, d = p.shape
    k = round(math.sqrt(n)) if n >= CELLS_FROM else 1
    if k == 1:
        return np.zeros(n, dtype=np.int64), p.mean(axis=0, keepdims=True, dtype=np.float64).astype(np.float32)
    import faiss

    km = faiss.Kmeans(d, k, niter=10, seed=int(seed), gpu=False, verbose=False, min_points_per_centroid=1,
                      max_points_per_centroid=64)
    km.train(p)
    centroids = np.asarray(km.centroids, dtype=np.float32)
    norms = (centroids * centroids).sum(axis=1)
    own = np.empty(n, dtype=np.int64)
    step = max(1, BLOCK_VALUES // k)
    for lo in range(0, n, step):
        own[lo:lo + step] = (norms - 2 * p[lo:lo + step] @ centroids.T).argmin(axis=1)
    return own, centroids


def _candidates(p: np.ndarray, own: np.ndarray, centroids: np.ndarray,
                radius2: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (first < second) within the projected radius, searched cell by cell: each cell's members
    against themselves and against the rows of earlier cells that its bisector bound lets through."""
    n = len(p)
    k = len(centroids)
    radius = math.sqrt(radius2)
    p_norms = (p * p).sum(axis=1)
    c_norms = (centroids * centroids).sum(axis=1)
    between = np.sqrt(np.maximum(c_norms[:, None] + c_norms[None, :] - 2 * centroids @ centroids.T, 0))
    to_own = np.maximum(p_norms - 2 * (p * centroids[own]).sum(axis=1) + c_norms[own], 0)
    # q . m >= -radius2 / 2 with these columns is |q - m|^2 <= radius2: one product, no extra passes
    ones = np.ones((n, 1), dtype=np.float32)
    as_query = np.hstack([p, -p_norms[:, None] / 2, ones])
    as_member = np.hstack([p, ones, -p_norms[:, None] / 2])
    order = np.argsort(own, kind="stable")
    bounds = np.searchsorted(own[order], np.arange(k + 1))
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    for cell in range(k):
        members = order[bounds[cell]:bounds[cell + 1]]
        if len(members) == 0:
            continue
        to_cell = p_norms - 2 * (p @ centroids[cell]) + c_norms[cell]
        reach = 2 * radius * between[own, cell] + 4 * ROUNDING
        earlier = np.flatnonzero((own < cell) & (to_cell - to_own <= reach))
        queries = np.concatenate([members, earlier])
        block = np.ascontiguousarray(as_member[members].T)
        step = max(1, BLOCK_VALUES // len(members))
        for lo in range(0, len(queries), step):
            chunk = queries[lo:lo + step]
            rows, cols = np.nonzero(as_query[chunk] @ block >= -radius2 / 2)
            a, b = chunk[rows], members[cols]
            distinct = a != b
            firsts.append(np.minimum(a, b)[distinct])
            seconds.append(np.maximum(a, b)[distinct])
    if not firsts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = np.unique(np.stack([np.concatenate(firsts), np.concatenate(seconds)], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def _decide(x: np.ndarray, first: np.ndarray, second: np.ndarray,
            threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The candidates whose full dot product, in float64, reaches the threshold."""
    keep = np.zeros(len(first), dtype=bool)
    for lo in range(0, len(first), ROWS_AT_ONCE):
        a = x[first[lo:lo + ROWS_AT_ONCE]].astype(np.float64)
        b = x[second[lo:lo + ROWS_AT_ONCE]].astype(np.float64)
        keep[lo:lo + ROWS_AT_ONCE] = np.einsum("ij,ij->i", a, b) >= threshold
    return first[keep], second[keep]
