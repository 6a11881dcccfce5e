"""k-means at scale: up to FLAT_MAX_K clusters one flat FAISS k-means (from random starts, the same labels,
centroids and centers as calling FAISS directly the way the code always did; from k-means++ starts, where
scikit-learn's k-means++ KMeans ends), and above it the two-level path is
deterministic, gives non-empty clusters whose centers are members, and assigns every point. The threshold is
lowered through `flat_max_k` so the two-level path runs on small inputs."""

from __future__ import annotations

import math

import faiss
import numpy as np
import pytest

from examiner.corpus.vectors import FLAT_MAX_K, faiss_uses_gpu, kmeans, split_k


def unit_vectors(n: int, d: int = 16, seed: int = 0, blobs: int = 40) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(blobs, d))
    x = centres[rng.integers(0, blobs, n)] + 0.3 * rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def old_kmeans(x: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The FAISS call, renumbering and center choice as written before the two-level path existed."""
    n, d = x.shape
    km = faiss.Kmeans(d, k, niter=20, nredo=1, seed=seed, gpu=faiss_uses_gpu(), verbose=False,
                      min_points_per_centroid=1, max_points_per_centroid=max(256, math.ceil(n / k)))
    km.train(x)
    labels = km.index.search(x, 1)[1][:, 0].astype(np.int64)
    order = list(dict.fromkeys(labels.tolist()))
    remap = np.full(k, -1, dtype=np.int64)
    remap[order] = np.arange(len(order))
    new_labels = remap[labels]
    centroids = np.asarray(km.centroids, dtype=np.float32)[order]
    dist = ((x - centroids[new_labels]) ** 2).sum(axis=1)
    centers = np.array([np.flatnonzero(new_labels == c)[np.argmin(dist[new_labels == c])]
                        for c in range(len(order))])
    return new_labels, centroids, centers


@pytest.mark.parametrize(("n", "k", "seed"), [(600, 100, 3), (3000, 500, 11)])
def test_below_the_threshold_random_starts_give_the_flat_faiss_result(n: int, k: int, seed: int) -> None:
    assert k <= FLAT_MAX_K
    x = unit_vectors(n, seed=seed)
    labels, centroids, centers = old_kmeans(x, k, seed)
    result = kmeans(x, k, seed=seed, init="random")
    assert np.array_equal(result.labels, labels)
    assert np.array_equal(result.centroids, centroids)  # bit for bit
    assert np.array_equal(result.centers, centers)


@pytest.mark.parametrize(("n", "k", "seed"), [(600, 100, 3), (3000, 500, 11)])
def test_k_means_plus_plus_starts_end_where_scikit_learn_ends(n: int, k: int, seed: int) -> None:
    """From the k-means++ start scikit-learn's KMeans draws for the same seed, FAISS's Lloyd iterations reach
    scikit-learn's clustering: the same partition and the same inertia (float32 sums aside), and below the
    random start's inertia on these clustered vectors."""
    from sklearn.cluster import KMeans

    x = unit_vectors(n, seed=seed)
    ours = kmeans(x, k, seed=seed)
    theirs = KMeans(n_clusters=k, init="k-means++", n_init=1, max_iter=20, tol=0.0, algorithm="lloyd",
                    random_state=seed).fit(x)
    assert ours.inertia == pytest.approx(float(theirs.inertia_), rel=1e-4)
    pairs = set(zip(ours.labels.tolist(), theirs.labels_.tolist()))
    assert len(pairs) == ours.k == len(set(theirs.labels_.tolist()))  # one-to-one: the same partition
    assert ours.inertia < kmeans(x, k, seed=seed, init="random").inertia
    again = kmeans(x, k, seed=seed)
    assert np.array_equal(again.labels, ours.labels) and np.array_equal(again.centroids, ours.centroids)
    with pytest.raises(ValueError):
        kmeans(x, k, seed=seed, init="kmeans")  # type: ignore[arg-type]


def check_clustering(x: np.ndarray, k: int, result) -> None:  # noqa: ANN001 - a Clustering
    n = len(x)
    assert result.labels.shape == (n,) and result.labels.min() == 0 and result.labels.max() == result.k - 1
    sizes = np.bincount(result.labels, minlength=result.k)
    assert (sizes > 0).all() and result.k <= k
    assert result.k >= 0.95 * k  # a few empty clusters dropped at most
    members = result.member_lists()
    assert len(members) == result.k and sum(len(m) for m in members) == n
    for c, (m, center) in enumerate(zip(members, result.centers)):
        assert result.labels[center] == c and center in m
        d = ((x[m] - result.centroids[c]) ** 2).sum(axis=1)
        assert d[np.searchsorted(m, center)] == d.min()  # the member nearest its centroid
    dist = ((x - result.centroids[result.labels]) ** 2).sum(axis=1)
    assert result.inertia == pytest.approx(float(dist.sum()), rel=1e-5)


def test_two_level_path_is_deterministic_and_complete() -> None:
    x = unit_vectors(4000, seed=5)
    k = 667
    a = kmeans(x, k, seed=9, flat_max_k=100)
    b = kmeans(x, k, seed=9, flat_max_k=100)
    assert np.array_equal(a.labels, b.labels) and np.array_equal(a.centers, b.centers)
    assert np.array_equal(a.centroids, b.centroids)
    check_clustering(x, k, a)
    other = kmeans(x, k, seed=10, flat_max_k=100)
    assert not np.array_equal(other.labels, a.labels)  # the seed matters
    flat = kmeans(x, k, seed=9)
    assert a.inertia < 1.5 * flat.inertia  # the shortcut costs some inertia, not a different answer


def test_two_level_path_on_tiny_and_degenerate_inputs() -> None:
    x = unit_vectors(30, seed=1)
    every = kmeans(x, 30, seed=0, flat_max_k=2)  # k = n: every point its own cluster
    assert every.k == 30 and every.inertia == pytest.approx(0.0, abs=1e-6)
    check_clustering(x, 5, kmeans(x, 5, seed=0, flat_max_k=2))
    same = kmeans(np.ones((40, 4), np.float32), 10, seed=0, flat_max_k=2)  # identical points: no crash
    assert all(same.labels[c] == i for i, c in enumerate(same.centers))


def test_split_k_is_proportional_bounded_and_exact() -> None:
    assert split_k(np.array([50, 30, 20]), 10).tolist() == [5, 3, 2]
    assert split_k(np.array([1, 1, 98]), 10).tolist() == [1, 1, 8]  # every group gets at least one
    assert split_k(np.array([2, 2, 2]), 6).tolist() == [2, 2, 2]  # and at most its size
    rng = np.random.default_rng(0)
    for _ in range(200):
        sizes = rng.integers(1, 300, rng.integers(1, 40))
        k = int(rng.integers(len(sizes), sizes.sum() + 1))
        shares = split_k(sizes, k)
        assert shares.sum() == k and (shares >= 1).all() and (shares <= sizes).all()
    with pytest.raises(ValueError):
        split_k(np.array([3, 3]), 1)


def test_with_a_gpu_only_the_coarse_level_of_two_level_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every GPU k-means builds its own FAISS GPU resources, which costs more than a small group's whole
    k-means (measured 9x slower on an H100), so with a GPU seen the coarse level asks for it and the groups
    do not. The GPU is faked (FAISS is told gpu=False underneath) so this runs on any machine."""
    import examiner.corpus.vectors as vectors

    asked: list[tuple[int, bool]] = []
    real_kmeans = faiss.Kmeans

    def recording_kmeans(d: int, k: int, **kwargs: object) -> object:
        asked.append((k, bool(kwargs.get("gpu"))))
        return real_kmeans(d, k, **{**kwargs, "gpu": False})

    monkeypatch.setattr(vectors, "faiss_uses_gpu", lambda: True)
    monkeypatch.setattr(faiss, "Kmeans", recording_kmeans)
    x = unit_vectors(3000)
    kmeans(x, 300, seed=0, flat_max_k=64)
    coarse = round(math.sqrt(300))
    assert asked[0] == (coarse, True)
    assert len(asked) > 1 and all(not gpu for _, gpu in asked[1:])
    asked.clear()
    kmeans(x, 50, seed=0, flat_max_k=64)  # flat: the one k-means uses the GPU
    assert asked == [(50, True)]


def test_centers_and_inertia_do_not_depend_on_the_row_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """_canonical takes the distances to the centroids CANONICAL_ROWS rows at a time (a bounded temporary);
    each row's sum is the same whatever the block, so labels, centers and inertia are too, bit for bit."""
    from examiner.corpus import vectors

    x = unit_vectors(3000, seed=3)
    whole = kmeans(x, 300, seed=2)
    monkeypatch.setattr(vectors, "CANONICAL_ROWS", 7)
    blocked = kmeans(x, 300, seed=2)
    assert np.array_equal(whole.labels, blocked.labels)
    assert np.array_equal(whole.centers, blocked.centers)
    assert whole.inertia == blocked.inertia
