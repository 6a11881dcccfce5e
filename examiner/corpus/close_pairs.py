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
units fall in candidate cells), but each costs `dims + 2` multiply-adds instead of 384: 82 s at 219,204
units, so about 1,700 s at 1,000,000 if it grows as n^2. No exact filter does much better here: cells in
all 384 dimensions still leave 15-26 % of the pairs to compare at 47,794 real vectors (the bound only
prunes a cell whose border is farther than r = 0.32 from the query, and MiniLM's cells are wider than that).

Above EXACT_UP_TO rows the search probes instead (`probed_close_pairs`): every row is compared in full
with the rows of the PROBES k-means cells nearest to it, so a pair is found when one row lies in a cell
near the other. That is not a guarantee, and the docstring there says what was measured; below
EXACT_UP_TO (every corpus examiner has been run on, the 219,204-unit scale run included) nothing changes.
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


EXACT_UP_TO = 250_000
"""Most rows searched exactly. The exact search's cost grows as n^2 (82 s of CPU at 219,204 units); above
this, `probed_close_pairs`'s grows as about n^1.5."""

PROBES = 32
"""Cells each row is compared with in the probed search (its own and the 31 next nearest). On 200,000 rows
composed from real unit vectors (experiments/bench_near_duplicates.py --composed, 121,426 pairs at 0.95),
8, 16 and 32 probes missed 367, 53 and 3 pairs, leaving 142, 23 and 1 more units after the merge, for
13.4, 17.0 and 26.1 s of CPU (the exact search: 84 to 92 s)."""

CELLS_PER_ROOT = 4
"""The probed search cuts n rows into CELLS_PER_ROOT * sqrt(n) k-means cells (4,000 at 1,000,000 rows),
so each row is compared with about PROBES / (CELLS_PER_ROOT * sqrt(n)) of the others."""


def close_pairs(rows: np.ndarray, threshold: float, *, dims: int = PROJECTED_DIMS, seed: int = 0,
                exact_up_to: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(first, second): every pair of row indices with first < second and rows[first] . rows[second] >=
    threshold (computed in float64), each pair once, sorted. Rows must have length at most 1. Up to
    `exact_up_to` rows (EXACT_UP_TO when None) the answer is exact and the same for any `dims` and `seed`,
    which only change the time it takes; above it the pairs come from `probed_close_pairs`."""
    x = np.ascontiguousarray(np.asarray(rows, dtype=np.float32))
    n = len(x)
    empty = np.zeros(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    _check_lengths(x)
    if n > (EXACT_UP_TO if exact_up_to is None else exact_up_to) and threshold > 0:
        return probed_close_pairs(x, threshold, seed=seed)
    radius2 = max(0.0, 2.0 - 2.0 * float(threshold)) + ROUNDING
    p = _project(x, dims)
    own, centroids = _cells(p, seed)
    first, second = _candidates(p, own, centroids, radius2)
    return _decide(x, first, second, threshold)


def probed_close_pairs(rows: np.ndarray, threshold: float, *, probes: int = PROBES,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(first, second) as `close_pairs`, for pairs one of whose rows lies in one of the `probes` k-means
    cells nearest to the other. The rows are cut into CELLS_PER_ROOT * sqrt(n) cells (FAISS k-means on a
    sample, each row in its nearest centroid's cell); each cell's members are then multiplied, in one
    BLAS product per block, with every row that has the cell among its `probes` nearest, and the
    candidates are decided by their float64 dot product. Every pair returned meets the threshold; a pair
    whose rows sit in cells far apart on the cell map is missed.

    Measured at threshold 0.95 against the exact search: on 47,794 real all-MiniLM-L6-v2 vectors (units,
    answers and reference texts of a scale run; 3,229 pairs) 16 probes found every pair, 4 missed 3; for
    rows composed from real vectors, harder, see PROBES. FAISS's own inverted-file range search makes the
    same comparisons one query row at a time: 46 s of CPU at 200,000 composed rows and 16 probes, where
    these per-cell products took 17 s. Needs threshold > 0 (zero rows then link with nothing)."""
    import faiss
    from threadpoolctl import threadpool_limits

    x = np.ascontiguousarray(np.asarray(rows, dtype=np.float32))
    n, d = x.shape
    empty = np.zeros(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    if threshold <= 0:
        raise ValueError("the probed search needs a threshold above 0")
    cells = max(1, min(n, round(CELLS_PER_ROOT * math.sqrt(n))))
    probes = max(1, min(int(probes), cells))
    km = faiss.Kmeans(d, cells, niter=10, seed=int(seed), gpu=False, verbose=False, min_points_per_centroid=1,
                      max_points_per_centroid=TRAINING_ROWS_PER_CELL)
    km.train(x)
    _, near = km.index.search(x, probes)  # (n, probes) nearest cells of each row, its own cell first
    near = near.astype(np.int64)
    own = near[:, 0]
    by_cell = np.argsort(own, kind="stable")
    member_bounds = np.searchsorted(own[by_cell], np.arange(cells + 1))
    probed = near.ravel()
    by_probe = np.argsort(probed, kind="stable")
    query_bounds = np.searchsorted(probed[by_probe], np.arange(cells + 1))
    asking = by_probe // probes  # row of each (row, probed cell) entry, grouped by cell
    loose = np.float32(float(threshold) - ROUNDING)  # float32 products; the float64 decision is the exact one
    found = _Pairs()
    with threadpool_limits(limits=1, user_api="blas"):  # thin products: threads only wait on each other
        for cell in range(cells):
            members = by_cell[member_bounds[cell]:member_bounds[cell + 1]]
            if len(members):
                found.compare(x, x, asking[query_bounds[cell]:query_bounds[cell + 1]], members, loose)
    return _decide(x, *found.unique(), threshold)


TRAINING_ROWS_PER_CELL = 16
"""The probed search's cells come from a k-means trained on a sample of this many rows per cell: the
cells only route the search, and training on every row cost 10 x n x cells x 384 multiply-adds, more than
the search itself (about 1.5e13 at 1,000,000 rows)."""


def _check_lengths(x: np.ndarray) -> None:
    """Raise ValueError unless every row has length at most 1 (the bounds assume it)."""
    n = len(x)
    longest = max(float(np.einsum("ij,ij->i", x[lo:lo + ROWS_AT_ONCE], x[lo:lo + ROWS_AT_ONCE]).max())
                  for lo in range(0, n, ROWS_AT_ONCE))
    if longest > 1 + 1e-5:
        raise ValueError(f"close_pairs needs rows of length at most 1; the longest is {math.sqrt(longest):.6f}")


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
    found = _Pairs()
    for cell in range(k):
        members = order[bounds[cell]:bounds[cell + 1]]
        if len(members) == 0:
            continue
        to_cell = p_norms - 2 * (p @ centroids[cell]) + c_norms[cell]
        reach = 2 * radius * between[own, cell] + 4 * ROUNDING
        earlier = np.flatnonzero((own < cell) & (to_cell - to_own <= reach))
        found.compare(as_query, as_member, np.concatenate([members, earlier]), members, -radius2 / 2)
    return found.unique()


class _Pairs:
    """Index pairs (first < second, no row with itself) gathered cell by cell; `unique` gives each once."""

    def __init__(self) -> None:
        self.firsts: list[np.ndarray] = []
        self.seconds: list[np.ndarray] = []

    def compare(self, query_rows: np.ndarray, member_rows: np.ndarray, queries: np.ndarray,
                members: np.ndarray, floor: float) -> None:
        """Keep (query, member) where query_rows[query] . member_rows[member] >= floor: one product per
        block of queries, at most BLOCK_VALUES values at once."""
        block = np.ascontiguousarray(member_rows[members].T)
        step = max(1, BLOCK_VALUES // len(members))
        for lo in range(0, len(queries), step):
            chunk = queries[lo:lo + step]
            at, col = np.nonzero(query_rows[chunk] @ block >= floor)
            a, b = chunk[at], members[col]
            distinct = a != b
            self.firsts.append(np.minimum(a, b)[distinct])
            self.seconds.append(np.maximum(a, b)[distinct])

    def unique(self) -> tuple[np.ndarray, np.ndarray]:
        """(first, second), each pair once, sorted."""
        if not self.firsts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        pairs = np.unique(np.stack([np.concatenate(self.firsts), np.concatenate(self.seconds)], axis=1), axis=0)
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
