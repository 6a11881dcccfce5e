"""Benchmark of the vector side: FAISS k-means against scikit-learn, and embedding throughput with cache.

Part 1: 100,000 x 384 random unit-norm vectors (seeded), k = 1,000, 20 iterations, one initialisation.
Both libraries start from k data points drawn at random (FAISS's only initialisation; scikit-learn's
init="random"), so neither gets k-means++'s head start. scikit-learn runs Lloyd with tol=0 so it does all
20 iterations like FAISS. Inertia is computed the same way for both: sum of squared distances of every
vector to its nearest final centroid.

Part 2: 5,000 real knowledge units (sentence units of WikiText-2 valid+test, via examiner.datasets) are
embedded with the bundled all-MiniLM-L6-v2 on this machine (model load excluded), then embedded again
through the SQLite embedding cache.

Prints a table and a final `RESULT ...` line; writes experiments/results/bench_vectors.json.

    python experiments/bench_vectors.py [--n 100000] [--k 1000] [--units 5000] [--skip-sklearn]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finish import print_result, save_json  # noqa: E402

from examiner.datasets import load_wikitext2, wikitext_corpus  # noqa: E402
from examiner.knowledge import sentence_units  # noqa: E402
from examiner.vectors import Embedder, EmbeddingCache, faiss_uses_gpu  # noqa: E402


def random_unit_vectors(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def inertia(x: np.ndarray, centroids: np.ndarray) -> float:
    """Sum of squared distances to the nearest centroid (exact, FAISS flat L2 search), float64 sum."""
    import faiss

    index = faiss.IndexFlatL2(centroids.shape[1])
    index.add(np.ascontiguousarray(centroids, dtype=np.float32))
    dist, _ = index.search(x, 1)
    return float(dist[:, 0].sum(dtype=np.float64))


def bench_faiss(x: np.ndarray, k: int, niter: int, seed: int) -> tuple[float, float, np.ndarray]:
    import faiss

    n, d = x.shape
    km = faiss.Kmeans(d, k, niter=niter, nredo=1, seed=seed, gpu=faiss_uses_gpu(), verbose=False,
                      max_points_per_centroid=max(256, -(-n // k)))  # never subsample: same data as sklearn
    t, c = time.perf_counter(), time.process_time()
    km.train(x)
    km.index.search(x, 1)  # final assignment, as sklearn's fit also returns labels
    return time.perf_counter() - t, time.process_time() - c, np.asarray(km.centroids)


def bench_sklearn(x: np.ndarray, k: int, niter: int, seed: int, init: str = "random") -> tuple[float, float, np.ndarray]:
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=k, init=init, n_init=1, max_iter=niter, tol=0.0, algorithm="lloyd",
                random_state=seed)
    t, c = time.perf_counter(), time.process_time()
    km.fit(x)
    return time.perf_counter() - t, time.process_time() - c, km.cluster_centers_.astype(np.float32)


def real_units(count: int) -> list[str]:
    articles = load_wikitext2("valid") + load_wikitext2("test")
    units = sentence_units(wikitext_corpus(articles))
    if len(units) < count:
        raise SystemExit(f"only {len(units)} units available, {count} requested")
    return [u.text for u in units[:count]]


def bench_embeddings(texts: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, EmbeddingCache(Path(tmp) / "embeddings.sqlite") as cache:
        embedder = Embedder(cache=cache)
        t = time.perf_counter()
        embedder.model.encode(["warm-up sentence"], show_progress_bar=False)  # load + warm up, not timed
        load_s = time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        first = embedder.embed(texts)
        cold_s, cold_cpu = time.perf_counter() - t, time.process_time() - c
        t = time.perf_counter()
        second = embedder.embed(texts)
        warm_s = time.perf_counter() - t
        assert np.array_equal(first, second) and embedder.encode_calls == 1
        return {
            "units": len(texts), "device": embedder.device, "model_load_s": load_s,
            "embed_s": cold_s, "embed_cpu_s": cold_cpu, "embed_units_per_s": len(texts) / cold_s,
            "cached_s": warm_s, "cached_units_per_s": len(texts) / warm_s, "cached_speedup": cold_s / warm_s,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=384)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--niter", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--units", type=int, default=5000)
    ap.add_argument("--skip-sklearn", action="store_true")
    ap.add_argument("--sklearn-default-init", action="store_true",
                    help="also time scikit-learn with its default k-means++ init (informational, not the headline)")
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "results" / "bench_vectors.json")
    args = ap.parse_args()

    import faiss
    import sklearn
    import torch

    x = random_unit_vectors(args.n, args.d, args.seed)
    print(f"k-means: {args.n} x {args.d} unit vectors, k={args.k}, {args.niter} iterations, "
          f"one random init (k data points), {os.cpu_count()} CPU(s), faiss GPU: {faiss_uses_gpu()}")
    print(f"  load average before: {os.getloadavg()[0]:.1f} (wall time is noisy on shared cores; CPU time less so)")
    faiss_s, faiss_cpu, faiss_c = bench_faiss(x, args.k, args.niter, args.seed)
    faiss_inertia = inertia(x, faiss_c)
    print(f"  faiss   {faiss_s:9.2f} s wall  {faiss_cpu:9.2f} s CPU   inertia {faiss_inertia:.2f}")
    if args.skip_sklearn:
        sk_s, sk_cpu, sk_inertia = float("nan"), float("nan"), float("nan")
    else:
        sk_s, sk_cpu, sk_c = bench_sklearn(x, args.k, args.niter, args.seed)
        sk_inertia = inertia(x, sk_c)
        print(f"  sklearn {sk_s:9.2f} s wall  {sk_cpu:9.2f} s CPU   inertia {sk_inertia:.2f}")
    extra = {}
    if args.sklearn_default_init:
        pp_s, pp_cpu, pp_c = bench_sklearn(x, args.k, args.niter, args.seed, init="k-means++")
        extra = {"sklearn_kmeanspp_s": pp_s, "sklearn_kmeanspp_cpu_s": pp_cpu,
                 "sklearn_kmeanspp_inertia": inertia(x, pp_c)}
        print(f"  sklearn with k-means++ init (informational) {pp_s:9.2f} s   inertia {extra['sklearn_kmeanspp_inertia']:.2f}")
    speedup = sk_s / faiss_s
    inertia_ratio = faiss_inertia / sk_inertia
    cpu_ratio = sk_cpu / faiss_cpu
    print(f"  time ratio sklearn/faiss = {speedup:.2f}x wall, {cpu_ratio:.2f}x CPU   "
          f"inertia ratio faiss/sklearn = {inertia_ratio:.4f}")

    print(f"embeddings: {args.units} WikiText-2 sentence units, all-MiniLM-L6-v2")
    emb = bench_embeddings(real_units(args.units))
    print(f"  first pass  {emb['embed_s']:8.2f} s  {emb['embed_units_per_s']:8.1f} units/s on {emb['device']} "
          f"(model load {emb['model_load_s']:.1f} s, not counted)")
    print(f"  cached pass {emb['cached_s']:8.3f} s  {emb['cached_units_per_s']:8.0f} units/s  "
          f"speed-up {emb['cached_speedup']:.0f}x")

    result = {
        "kmeans": {
            "n": args.n, "d": args.d, "k": args.k, "niter": args.niter, "seed": args.seed,
            "init": "random (k data points), one init, no subsampling",
            "faiss_s": faiss_s, "sklearn_s": sk_s, "speedup": speedup,
            "faiss_cpu_s": faiss_cpu, "sklearn_cpu_s": sk_cpu, "cpu_speedup": cpu_ratio,
            "faiss_inertia": faiss_inertia, "sklearn_inertia": sk_inertia, "inertia_ratio": inertia_ratio,
            "faiss_gpu": faiss_uses_gpu(), **extra,
        },
        "embeddings": emb,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "faiss": faiss.__version__, "sklearn": sklearn.__version__, "torch": torch.__version__,
                    "cuda": torch.cuda.is_available(), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
                    "load_average_at_end": os.getloadavg()},
    }
    save_json(result, args.out, indent=2)
    print_result({"faiss_s": f"{faiss_s:.2f}", "sklearn_s": f"{sk_s:.2f}", "speedup": f"{speedup:.2f}",
                  "cpu_speedup": f"{cpu_ratio:.2f}", "inertia_ratio": f"{inertia_ratio:.4f}",
                  "embed_units_per_s": f"{emb['embed_units_per_s']:.1f}", "cached_speedup": f"{emb['cached_speedup']:.1f}"})


if __name__ == "__main__":
    main()
