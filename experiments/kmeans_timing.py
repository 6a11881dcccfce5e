"""What the k-means benchmarks (bench_vectors.py, bench_gpu.py) share: seeded data, the two timed k-means
set up the same way, and one inertia.

Both k-means start from k data points drawn at random (FAISS's only initialisation; scikit-learn's
init="random" unless told otherwise) and run every iteration (scikit-learn Lloyd with tol=0; FAISS trains
on every point, no subsample). Each is timed from the call to the final assignment of every point.
"""

from __future__ import annotations

import time

import numpy as np


def random_unit_vectors(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def faiss_gpus() -> int:
    """GPUs FAISS sees (0 for a CPU build)."""
    import faiss

    return int(faiss.get_num_gpus()) if hasattr(faiss, "get_num_gpus") else 0


def inertia(x: np.ndarray, centroids: np.ndarray) -> float:
    """Sum of squared distances to the nearest centroid (exact flat L2 search, on the GPU if FAISS sees
    one), summed in float64."""
    import faiss

    index = faiss.IndexFlatL2(centroids.shape[1])
    if faiss_gpus():
        index = faiss.index_cpu_to_all_gpus(index)
    index.add(np.ascontiguousarray(centroids, dtype=np.float32))
    dist, _ = index.search(x, 1)
    return float(dist[:, 0].sum(dtype=np.float64))


def faiss_kmeans(x: np.ndarray, k: int, *, niter: int, seed: int, gpu: bool) -> tuple[float, float, np.ndarray]:
    """(wall s, CPU s, centroids) of one FAISS k-means trained on every point, then assigning them all."""
    import faiss

    n, d = x.shape
    km = faiss.Kmeans(d, k, niter=niter, nredo=1, seed=seed, gpu=gpu, verbose=False,
                      max_points_per_centroid=max(256, -(-n // k)))  # never subsample: same data as sklearn
    t, c = time.perf_counter(), time.process_time()
    km.train(x)
    km.index.search(x, 1)  # final assignment, as sklearn's fit also returns labels
    return time.perf_counter() - t, time.process_time() - c, np.asarray(km.centroids)


def sklearn_kmeans(x: np.ndarray, k: int, *, niter: int, seed: int,
                   init: str = "random") -> tuple[float, float, np.ndarray]:
    """(wall s, CPU s, centroids) of scikit-learn's Lloyd k-means, one initialisation, all iterations."""
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=k, init=init, n_init=1, max_iter=niter, tol=0.0, algorithm="lloyd", random_state=seed)
    t, c = time.perf_counter(), time.process_time()
    km.fit(x)
    return time.perf_counter() - t, time.process_time() - c, km.cluster_centers_.astype(np.float32)
