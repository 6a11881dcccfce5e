"""examiner's k-means++ starts are scikit-learn's, bit for bit: the exam's clusters (and so its questions and
verdicts) must not change with the faster arithmetic of examiner.corpus.vectors.kmeans_plusplus_starts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import kmeans_plusplus

from examiner.corpus.vectors import kmeans_plusplus_starts


def unit_rows(n: int, d: int, seed: int, groups: int = 0) -> np.ndarray:
    """Unit-norm float32 rows like sentence embeddings; with `groups`, gathered around that many centres
    (so some rows are near-duplicates), else spread out."""
    rng = np.random.default_rng(seed)
    if groups:
        centres = rng.normal(size=(groups, d))
        x = centres[rng.integers(0, groups, n)] + 0.05 * rng.normal(size=(n, d))
    else:
        x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


@pytest.mark.parametrize(("n", "d", "k", "groups", "seed"), [
    (50, 8, 1, 0, 0),
    (50, 8, 50, 0, 3),          # every row a centre
    (300, 16, 40, 5, 1),
    (2500, 64, 300, 0, 7),      # more rows than one block of scikit-learn's distance computation
    (1200, 384, 200, 30, 11),   # the embeddings' width
    (4000, 32, 60, 12, 2**32 + 5),  # a seed past 32 bits, as the exam's round seeds may be
])
def test_the_starts_are_scikit_learns(n: int, d: int, k: int, groups: int, seed: int) -> None:
    x = unit_rows(n, d, seed % 1000, groups)
    expected, _ = kmeans_plusplus(x, k, random_state=seed % 2**32)
    got = kmeans_plusplus_starts(x, k, seed=seed)
    assert got.dtype == np.float32 and got.shape == (k, d)
    assert got.tobytes() == expected.tobytes()


def test_more_clusters_than_rows_is_refused() -> None:
    with pytest.raises(ValueError, match="n_clusters"):
        kmeans_plusplus_starts(unit_rows(5, 4, 0), 6, seed=0)
