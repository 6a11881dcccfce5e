"""Benchmark of the vector side: FAISS k-means against scikit-learn, and embedding throughput with cache.

Part 1: 100,000 x 384 random unit-norm vectors (seeded), k = 1,000, 20 iterations, one initialisation.
Both libraries start from k data points drawn at random (FAISS's only initialisation; scikit-learn's
init="random"), so neither gets k-means++'s head start. scikit-learn runs Lloyd with tol=0 so it does all
20 iterations like FAISS. Inertia is computed the same way for both: sum of squared distances of every
vector to its nearest final centroid.

Part 1b (real): examiner's k-means (examiner.corpus.vectors.kmeans: FAISS from scikit-learn's k-means++
starts) against scikit-learn's KMeans(init="k-means++", one init, Lloyd, tol=0, 20 iterations) and against
FAISS from its random start, on --units real unit embeddings (the WikiText-2 sentence units of part 2,
embedded with the bundled all-MiniLM-L6-v2), k = ceil(n / --cluster-size) as in the exam, for each of
--real-seeds. The vectors derive from the public data, so they are cached outside the repository
(--unit-vectors, default in the system's temporary folder). Inertia as in part 1; the ratio reported is the
worst over the seeds.

Part 2: 5,000 real knowledge units (sentence units of WikiText-2 valid+test, via examiner.corpus.datasets) are
embedded with the bundled all-MiniLM-L6-v2 on this machine (model load excluded), then embedded again
through the SQLite embedding cache.

Part 3 (k-means at scale, the exam's k = ceil(n / 6)): examiner.corpus.vectors.kmeans's two-level path (coarse
k-means into sqrt(k) groups trained on a FAISS sample, then k-means inside each group) against one flat FAISS
k-means trained on every point, at --flat-n vectors (k = n/6, both timed, inertia two-level / flat = the
price of the shortcut), then the two-level path alone at --big-n (200,000 x 384, k = 33,334). Vectors are
real unit embeddings read from --vectors (an examiner embedding cache: table embeddings) when it holds
enough, else seeded random unit vectors; the output says which. Cluster sizes: max and median.

Part 4 (record): one round of the exam's cluster step at 20,000 and 200,000 units (RefEval.groups and
.projection), the size of the clusters/<target>/round-1.json it writes, and the time to draw its map.

Prints a table and a final `RESULT ...` line; writes experiments/results/bench_vectors.json.

    python experiments/bench_vectors.py [--n 100000] [--k 1000] [--units 5000] [--skip-sklearn]
        [--parts kmeans,real,embed,scale,record] [--real-seeds 1234,1,2] [--unit-vectors FILE.npy] [--flat-n 50000] [--big-n 200000] [--vectors CACHE.sqlite]
        [--record-sizes 20000,200000]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finish import print_result, save_json  # noqa: E402
from kmeans_timing import faiss_kmeans, inertia, random_unit_vectors, sklearn_kmeans  # noqa: E402

from examiner.corpus.benchmarks import load_wikitext2, wikitext_corpus  # noqa: E402
from examiner.corpus.units import sentence_units  # noqa: E402
from examiner.corpus.vectors import (  # noqa: E402
    FLAT_MAX_K, Embedder, EmbeddingCache, Init, faiss_uses_gpu, k_for, kmeans)


def real_units(count: int) -> list[str]:
    articles = load_wikitext2("valid") + load_wikitext2("test")
    units = sentence_units(wikitext_corpus(articles))
    if len(units) < count:
        raise SystemExit(f"only {len(units)} units available, {count} requested")
    return [u.text for u in units[:count]]


def unit_vectors(path: Path, count: int) -> np.ndarray:
    """`count` real unit embeddings: read from `path` (.npy) when it holds them, else embedded and saved."""
    if path.exists():
        cached = np.load(path)
        if cached.shape[0] >= count:
            return np.ascontiguousarray(cached[:count], dtype=np.float32)
    x = Embedder().embed(real_units(count))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, x)
    return x


def bench_real_kmeans(args: argparse.Namespace) -> dict[str, object]:
    """Part 1b: examiner's k-means (k-means++ starts) vs scikit-learn's k-means++ and FAISS's random start."""
    from sklearn.cluster import KMeans

    x = unit_vectors(args.unit_vectors, args.units)
    k = k_for(len(x), args.cluster_size)
    print(f"k-means on real unit embeddings: {len(x)} x {x.shape[1]} (WikiText-2 sentence units, all-MiniLM-L6-v2), "
          f"k = {k}, {args.niter} iterations, faiss GPU: {faiss_uses_gpu()}; load average {os.getloadavg()[0]:.1f}")
    rows = []
    for seed in (int(s) for s in args.real_seeds.split(",")):
        t, c = time.perf_counter(), time.process_time()
        sk = KMeans(n_clusters=k, init="k-means++", n_init=1, max_iter=args.niter, tol=0.0, algorithm="lloyd",
                    random_state=seed).fit(x)
        sk_s, sk_cpu = time.perf_counter() - t, time.process_time() - c
        sk_inertia = inertia(x, sk.cluster_centers_.astype(np.float32))
        ours = timed_kmeans(x, k, seed, args.niter, flat_max_k=FLAT_MAX_K, init="k-means++")
        ours_inertia = inertia(x, ours.pop("centroids"))
        rand = timed_kmeans(x, k, seed, args.niter, flat_max_k=FLAT_MAX_K, init="random")
        rand_inertia = inertia(x, rand.pop("centroids"))
        row = {"seed": seed, "sklearn_s": sk_s, "sklearn_cpu_s": sk_cpu, "sklearn_inertia": sk_inertia,
               "ours_s": ours["s"], "ours_cpu_s": ours["cpu_s"], "ours_inertia": ours_inertia,
               "random_s": rand["s"], "random_cpu_s": rand["cpu_s"], "random_inertia": rand_inertia,
               "ratio": ours_inertia / sk_inertia, "random_ratio": rand_inertia / sk_inertia}
        rows.append(row)
        print(f"  seed {seed:5d}: sklearn k-means++ {sk_inertia:9.2f} ({sk_s:6.2f} s wall, {sk_cpu:6.2f} s CPU)  "
              f"examiner (FAISS, k-means++ starts) {ours_inertia:9.2f} ({ours['s']:6.2f} s, {ours['cpu_s']:6.2f} s CPU) "
              f"ratio {row['ratio']:.4f}  FAISS random start {rand_inertia:9.2f} ({rand['s']:6.2f} s) ratio "
              f"{row['random_ratio']:.4f}")
    worst = max(rows, key=lambda r: r["ratio"])
    return {"n": len(x), "d": int(x.shape[1]), "k": k, "niter": args.niter, "faiss_gpu": faiss_uses_gpu(),
            "rows": rows, "inertia_ratio": worst["ratio"],
            "random_inertia_ratio": max(r["random_ratio"] for r in rows),
            "ours_s": max(r["ours_s"] for r in rows), "sklearn_s": max(r["sklearn_s"] for r in rows),
            "random_s": max(r["random_s"] for r in rows)}


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


def cached_vectors(path: Path | None, n: int, d: int) -> np.ndarray | None:
    """The first n vectors of dimension d in an embedding cache (read-only), or None when it holds fewer."""
    if path is None or not path.exists():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT vector FROM embeddings WHERE dim = ? ORDER BY rowid LIMIT ?", (d, n)).fetchall()
    finally:
        db.close()
    if len(rows) < n:
        return None
    return np.stack([np.frombuffer(blob, dtype=np.float32) for (blob,) in rows])


def scale_vectors(path: Path | None, n: int, d: int, seed: int) -> tuple[np.ndarray, str]:
    """n x d unit vectors for part 3 and where they came from."""
    real = cached_vectors(path, n, d)
    if real is not None:
        return real, f"real embeddings from {path}"
    return random_unit_vectors(n, d, seed), "seeded random unit vectors"


def timed_kmeans(x: np.ndarray, k: int, seed: int, niter: int, flat_max_k: int,
                 init: Init = "k-means++") -> dict[str, Any]:
    """examiner.corpus.vectors.kmeans (flat when k <= flat_max_k, else two-level): time, inertia, cluster sizes
    (and the centroids, for part 1b)."""
    t, c = time.perf_counter(), time.process_time()
    result = kmeans(x, k, seed=seed, niter=niter, flat_max_k=flat_max_k, init=init)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    sizes = np.bincount(result.labels)
    return {"s": wall, "cpu_s": cpu, "inertia": result.inertia, "k": result.k,
            "max_size": int(sizes.max()), "median_size": float(np.median(sizes)), "centroids": result.centroids}


def bench_scale(args: argparse.Namespace) -> dict[str, object]:
    """Two-level vs flat at --flat-n, then two-level alone at --big-n."""
    x, source = scale_vectors(args.vectors, args.flat_n, args.d, args.seed)
    k = k_for(args.flat_n, args.cluster_size)
    print(f"k-means at scale: {args.flat_n} x {args.d} {source}, k = {k} (n/{args.cluster_size}), "
          f"{args.niter} iterations; load average {os.getloadavg()[0]:.1f}")
    two = timed_kmeans(x, k, args.seed, args.niter, flat_max_k=1)
    two.pop("centroids")
    print(f"  two-level {two['s']:9.2f} s wall {two['cpu_s']:9.2f} s CPU  inertia {two['inertia']:.2f}  "
          f"{two['k']} clusters, size max {two['max_size']} median {two['median_size']:.0f}")
    flat = timed_kmeans(x, k, args.seed, args.niter, flat_max_k=len(x))  # never two-level
    flat.pop("centroids")
    print(f"  flat      {flat['s']:9.2f} s wall {flat['cpu_s']:9.2f} s CPU  inertia {flat['inertia']:.2f}  "
          f"{flat['k']} clusters, size max {flat['max_size']} median {flat['median_size']:.0f}")
    ratio = two["inertia"] / flat["inertia"]
    print(f"  inertia two-level / flat = {ratio:.4f}   time flat / two-level = {flat['s'] / two['s']:.1f}x")
    big_x, big_source = scale_vectors(args.vectors, args.big_n, args.d, args.seed)
    big_k = k_for(args.big_n, args.cluster_size)
    big = timed_kmeans(big_x, big_k, args.seed, args.niter, flat_max_k=1)
    big.pop("centroids")
    print(f"  two-level at {args.big_n} x {args.d} ({big_source}), k = {big_k}: {big['s']:.2f} s wall "
          f"{big['cpu_s']:.2f} s CPU, {big['k']} clusters, size max {big['max_size']} median {big['median_size']:.0f}")
    return {"flat_n": args.flat_n, "k": k, "vectors": source, "two_level": two, "flat": flat,
            "inertia_ratio_two_level_flat": ratio, "big_n": args.big_n, "big_k": big_k, "big_vectors": big_source,
            "big_two_level": big}


def bench_record(n: int, args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """One exam round's clustering of an n-unit pool as the cluster node makes it (RefEval.groups and
    .projection), written to clusters/<target>/round-1.json, then drawn as the report's map."""
    from examiner.core.records import ClusterRecord, ClusterRound
    from examiner.core.rundir import RunDir
    from examiner.exam.modes import RefEval
    from examiner.reporting.figures import map_figure, map_sample

    x, source = scale_vectors(args.vectors, n, args.d, args.seed)
    pool = [f"ku-{i:016x}" for i in range(n)]  # the length of real unit ids
    mode = RefEval()
    t, c = time.perf_counter(), time.process_time()
    groups = mode.groups(pool, x, args.cluster_size, args.seed)
    groups_s, groups_cpu_s = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    projection = mode.projection(pool, x, args.seed)
    projection_s, projection_cpu_s = time.perf_counter() - t, time.process_time() - c
    data = ClusterRound(round=1, target="alpha", k=len(groups), projection=projection, clusters=[
        ClusterRecord(id=f"r1-c{i}-{i:06x}", center=g[0], members=g) for i, g in enumerate(groups)])
    t = time.perf_counter()
    path = RunDir(tmp / f"run-{n}").write_clusters(data)
    write_s = time.perf_counter() - t
    t = time.perf_counter()
    png = map_figure([data], "alpha", tmp / f"map-{n}.png", seed=args.seed)
    map_s = time.perf_counter() - t
    sample = map_sample(data, seed=args.seed)
    row = {"n": n, "vectors": source, "clusters": len(groups), "groups_s": groups_s, "groups_cpu_s": groups_cpu_s,
           "groups_cpu_ms_per_unit": 1e3 * groups_cpu_s / n, "projection_s": projection_s,
           "projection_cpu_s": projection_cpu_s,
           "projected": len(projection), "round_json_mb": path.stat().st_size / 1e6, "write_s": write_s,
           "map_s": map_s, "map_png_kb": png.stat().st_size / 1e3 if png else 0.0, "map_points": sample.shown}
    print(f"  {n:7d} units ({source}): {len(groups)} clusters in {groups_s:.1f} s ({groups_cpu_s:.1f} s CPU, "
          f"{row['groups_cpu_ms_per_unit']:.3f} ms a unit), projection of "
          f"{len(projection)} in {projection_s:.1f} s ({projection_cpu_s:.1f} s CPU), round-1.json {row['round_json_mb']:.2f} MB, "
          f"map {sample.shown} of {n} points in {map_s:.1f} s ({row['map_png_kb']:.0f} KB PNG)")
    return row


def bench_records(args: argparse.Namespace) -> list[dict[str, float]]:
    """Part 4: the round record and the map at each --record-sizes pool size."""
    print(f"round record and map (one round, clusters of {args.cluster_size}):")
    with tempfile.TemporaryDirectory() as tmp:
        return [bench_record(int(n), args, Path(tmp)) for n in args.record_sizes.split(",")]


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
    ap.add_argument("--parts", default="kmeans,real,embed,scale,record",
                    help="comma-separated parts to run: kmeans (FAISS vs sklearn), real (examiner's k-means vs "
                         "sklearn's k-means++ on real unit embeddings), embed, scale (two-level k-means), "
                         "record (a round's clusters file and map)")
    ap.add_argument("--real-seeds", default="1234,1,2", help="part real: seeds, each a k-means of all three")
    ap.add_argument("--unit-vectors", type=Path,
                    default=Path(tempfile.gettempdir()) / "examiner-bench-vectors-units.npy",
                    help="part real: .npy cache of the real unit embeddings (derived from public data: keep it "
                         "outside the repository)")
    ap.add_argument("--flat-n", type=int, default=50_000, help="part 3: vectors for two-level vs flat")
    ap.add_argument("--big-n", type=int, default=200_000, help="part 3: vectors for the two-level path alone")
    ap.add_argument("--cluster-size", type=int, default=6, help="part 3: k = ceil(n / cluster size)")
    ap.add_argument("--vectors", type=Path, default=None,
                    help="part 3: an embedding cache (SQLite) to read real vectors from")
    ap.add_argument("--record-sizes", default="20000,200000",
                    help="part 4 (record): pool sizes whose round-1.json and map are written and timed")
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "results" / "bench_vectors.json")
    args = ap.parse_args()

    import faiss
    import sklearn
    import torch

    parts = set(args.parts.split(","))
    result: dict[str, object] = {}
    figures: dict[str, str] = {}
    if "kmeans" in parts:
        result["kmeans"] = bench_faiss_vs_sklearn(args)
        km = result["kmeans"]
        figures |= {"faiss_s": f"{km['faiss_s']:.2f}", "sklearn_s": f"{km['sklearn_s']:.2f}",
                    "speedup": f"{km['speedup']:.2f}", "cpu_speedup": f"{km['cpu_speedup']:.2f}",
                    "inertia_ratio": f"{km['inertia_ratio']:.4f}"}
    if "real" in parts:
        real = result["real"] = bench_real_kmeans(args)
        figures |= {"real_inertia_ratio": f"{real['inertia_ratio']:.4f}",
                    "real_random_inertia_ratio": f"{real['random_inertia_ratio']:.4f}",
                    "real_kmeans_s": f"{real['ours_s']:.2f}", "real_sklearn_s": f"{real['sklearn_s']:.2f}"}
    if "embed" in parts:
        print(f"embeddings: {args.units} WikiText-2 sentence units, all-MiniLM-L6-v2")
        emb = bench_embeddings(real_units(args.units))
        print(f"  first pass  {emb['embed_s']:8.2f} s  {emb['embed_units_per_s']:8.1f} units/s on {emb['device']} "
              f"(model load {emb['model_load_s']:.1f} s, not counted)")
        print(f"  cached pass {emb['cached_s']:8.3f} s  {emb['cached_units_per_s']:8.0f} units/s  "
              f"speed-up {emb['cached_speedup']:.0f}x")
        result["embeddings"] = emb
        figures |= {"embed_units_per_s": f"{emb['embed_units_per_s']:.1f}",
                    "cached_speedup": f"{emb['cached_speedup']:.1f}"}
    if "scale" in parts:
        sc = result["scale"] = bench_scale(args)
        figures |= {"two_level_s": f"{sc['two_level']['s']:.2f}", "flat_s": f"{sc['flat']['s']:.2f}",
                    "two_level_inertia_ratio": f"{sc['inertia_ratio_two_level_flat']:.4f}",
                    "big_two_level_s": f"{sc['big_two_level']['s']:.2f}",
                    "big_max_cluster": str(sc["big_two_level"]["max_size"])}
    if "record" in parts:
        result["records"] = bench_records(args)
        figures |= {f"round_json_mb_{r['n']}": f"{r['round_json_mb']:.2f}" for r in result["records"]}
        figures |= {f"groups_cpu_ms_per_unit_{r['n']}": f"{r['groups_cpu_ms_per_unit']:.3f}" for r in result["records"]}
    result["machine"] = {
        "cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
        "faiss": faiss.__version__, "sklearn": sklearn.__version__, "torch": torch.__version__,
        "cuda": torch.cuda.is_available(), "faiss_gpu": faiss_uses_gpu(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "load_average_at_end": os.getloadavg()}
    save_json(result, args.out, indent=2)
    print_result(figures)


def bench_faiss_vs_sklearn(args: argparse.Namespace) -> dict[str, object]:
    """Part 1: FAISS and scikit-learn k-means on the same random vectors."""
    x = random_unit_vectors(args.n, args.d, args.seed)
    print(f"k-means: {args.n} x {args.d} unit vectors, k={args.k}, {args.niter} iterations, "
          f"one random init (k data points), {os.cpu_count()} CPU(s), faiss GPU: {faiss_uses_gpu()}")
    print(f"  load average before: {os.getloadavg()[0]:.1f} (wall time is noisy on shared cores; CPU time less so)")
    faiss_s, faiss_cpu, faiss_c = faiss_kmeans(x, args.k, niter=args.niter, seed=args.seed, gpu=faiss_uses_gpu())
    faiss_inertia = inertia(x, faiss_c)
    print(f"  faiss   {faiss_s:9.2f} s wall  {faiss_cpu:9.2f} s CPU   inertia {faiss_inertia:.2f}")
    if args.skip_sklearn:
        sk_s, sk_cpu, sk_inertia = float("nan"), float("nan"), float("nan")
    else:
        sk_s, sk_cpu, sk_c = sklearn_kmeans(x, args.k, niter=args.niter, seed=args.seed)
        sk_inertia = inertia(x, sk_c)
        print(f"  sklearn {sk_s:9.2f} s wall  {sk_cpu:9.2f} s CPU   inertia {sk_inertia:.2f}")
    extra = {}
    if args.sklearn_default_init:
        pp_s, pp_cpu, pp_c = sklearn_kmeans(x, args.k, niter=args.niter, seed=args.seed, init="k-means++")
        extra = {"sklearn_kmeanspp_s": pp_s, "sklearn_kmeanspp_cpu_s": pp_cpu,
                 "sklearn_kmeanspp_inertia": inertia(x, pp_c)}
        print(f"  sklearn with k-means++ init (informational) {pp_s:9.2f} s   inertia {extra['sklearn_kmeanspp_inertia']:.2f}")
    speedup = sk_s / faiss_s
    inertia_ratio = faiss_inertia / sk_inertia
    cpu_ratio = sk_cpu / faiss_cpu
    print(f"  time ratio sklearn/faiss = {speedup:.2f}x wall, {cpu_ratio:.2f}x CPU   "
          f"inertia ratio faiss/sklearn = {inertia_ratio:.4f}")
    return {
        "n": args.n, "d": args.d, "k": args.k, "niter": args.niter, "seed": args.seed,
        "init": "random (k data points), one init, no subsampling",
        "faiss_s": faiss_s, "sklearn_s": sk_s, "speedup": speedup,
        "faiss_cpu_s": faiss_cpu, "sklearn_cpu_s": sk_cpu, "cpu_speedup": cpu_ratio,
        "faiss_inertia": faiss_inertia, "sklearn_inertia": sk_inertia, "inertia_ratio": inertia_ratio,
        "faiss_gpu": faiss_uses_gpu(), **extra,
    }


if __name__ == "__main__":
    main()
