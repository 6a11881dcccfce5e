"""Embeddings (the real bundled model, offline), the embedding cache, FAISS k-means and 2-D maps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from examiner.corpus.vectors import Embedder, EmbeddingCache, bundled_model_path, k_for, kmeans, project_2d

SENTENCES = [
    "The cat sat on the mat.",
    "A kitten was sitting on the rug.",
    "Stock markets fell sharply on Monday.",
    "Shares dropped at the start of the week.",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(device="cpu")


def test_bundled_model_is_local() -> None:
    path = bundled_model_path()
    assert (path / "model.safetensors").exists()


def test_embeddings_are_normalised_and_meaningful(embedder: Embedder) -> None:
    v = embedder.embed(SENTENCES)
    assert v.shape == (4, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2] and sims[2, 3] > sims[1, 3]
    assert embedder.embed([]).shape == (0, 384)


def test_cache_hit_avoids_reencoding(embedder: Embedder, tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    cached = Embedder(device="cpu", cache=cache)
    cached._model = embedder.model  # share the loaded model; counters stay per instance
    first = cached.embed(SENTENCES + SENTENCES[:1])
    assert (cached.encode_calls, cached.encoded_texts) == (1, 4)  # the duplicate text is encoded once
    again = cached.embed(list(reversed(SENTENCES)))
    assert (cached.encode_calls, cached.encoded_texts) == (1, 4)
    assert np.array_equal(again, first[:4][::-1])
    cached.embed(SENTENCES[:2] + ["A brand new sentence."])
    assert (cached.encode_calls, cached.encoded_texts) == (2, 5)
    cache.close()
    with EmbeddingCache(tmp_path / "emb.sqlite") as reopened:  # persists across processes / runs
        assert len(reopened) == 5
        fresh = Embedder(device="cpu", cache=reopened)
        fresh.embed(SENTENCES)
        assert fresh.encode_calls == 0 and fresh._model is None  # model never loaded


def _blobs(n_per: int = 30, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, 8)) * 10
    return np.vstack([c + rng.normal(size=(n_per, 8)) for c in centres]).astype(np.float32)


def test_kmeans_deterministic_and_centers_in_their_clusters() -> None:
    x = _blobs()
    a = kmeans(x, 4, seed=7)
    b = kmeans(x, 4, seed=7)
    assert np.array_equal(a.labels, b.labels) and np.array_equal(a.centers, b.centers)
    assert np.allclose(a.centroids, b.centroids)
    assert a.k == 4 and a.labels[0] == 0  # clusters numbered by first appearance
    best = kmeans(x, 4, seed=7, nredo=5)  # one random init can merge two blobs; restarts recover them
    assert sorted(np.bincount(best.labels).tolist()) == [30, 30, 30, 30] and best.inertia <= a.inertia
    for c, center in enumerate(a.centers):
        members = a.members(c)
        assert a.labels[center] == c
        d = ((x[members] - a.centroids[c]) ** 2).sum(axis=1)
        assert center == members[int(np.argmin(d))]
    expected = sum(((x[i] - a.centroids[a.labels[i]]) ** 2).sum() for i in range(len(x)))
    assert a.inertia == pytest.approx(expected, rel=1e-4)


def test_kmeans_tiny_inputs() -> None:
    x = _blobs(n_per=1)[:3]
    c = kmeans(x, 10, seed=0)  # n < k: every vector its own cluster
    assert c.k == 3 and c.labels.tolist() == [0, 1, 2] and c.centers.tolist() == [0, 1, 2] and c.inertia == 0
    one = kmeans(x[:1], 5, seed=0)
    assert one.k == 1 and one.labels.tolist() == [0] and one.centers.tolist() == [0]
    single = kmeans(x, 1, seed=0)
    assert single.labels.tolist() == [0, 0, 0] and np.allclose(single.centroids[0], x.mean(axis=0))
    empty = kmeans(np.zeros((0, 8), np.float32), 3, seed=0)
    assert empty.k == 0 and empty.labels.shape == (0,)
    same = kmeans(np.ones((6, 4), np.float32), 3, seed=0)  # identical points: no crash, valid centers
    assert all(same.labels[c] == i for i, c in enumerate(same.centers))


def test_k_for() -> None:
    assert k_for(100, 8) == 13
    assert k_for(5, 8) == 1
    assert k_for(1, 1) == 1
    assert k_for(10, 1) == 10
    assert k_for(0, 8) == 0
    with pytest.raises(ValueError):
        k_for(10, 0)


@pytest.mark.parametrize("method", ["pca", "tsne"])
def test_project_2d(method: str) -> None:
    x = _blobs(n_per=5)
    a = project_2d(x, method, seed=1)
    assert a.shape == (20, 2) and a.dtype == np.float32
    assert np.allclose(a, project_2d(x, method, seed=1))
    assert project_2d(x[:1], method).shape == (1, 2)
    assert project_2d(x[:2], method).shape == (2, 2)
    assert project_2d(x[:0], method).shape == (0, 2)
