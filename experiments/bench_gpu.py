"""GPU against CPU on one machine: FAISS k-means (GPU FAISS, CPU FAISS, scikit-learn) and embedding throughput.

Part `kmeans`: seeded random unit vectors of dimension 384, 20 iterations, one initialisation drawn from the
data (FAISS's only initialisation; scikit-learn's init="random", Lloyd, tol=0 so it runs all 20 iterations),
at n = 100,000 and 1,000,000 with k = 1,000. FAISS trains on every point (max_points_per_centroid = n / k, no
subsample) so the three train on the same data. Each row is timed from the call to the final assignment of
every point; inertia (sum of squared distances to the nearest centroid) is computed the same exact way for
all. FAISS GPU gets one untimed small k-means first, so CUDA start-up is not in its time.

Part `exam`: the exam's own clustering, examiner.corpus.vectors.kmeans (flat up to FLAT_MAX_K clusters, two-level
above), at the exam's k = ceil(n / 6) for n = 200,000 and 1,000,000, with FAISS on the GPU and with FAISS on
the CPU (faiss_uses_gpu switched off): the figure a user with a GPU sees per round-1 clustering.

Part `embed`: examiner.corpus.vectors.Embedder (all-MiniLM-L6-v2, L2-normalised float32 rows, the exam's batch of
64 and a batch of 256) on real knowledge-unit texts read from --texts (one per line, .gz read too), on CUDA
and on the CPU (--cpu-texts of them: the CPU is much slower), plus CUDA with the model in float16 (not what
the exam runs; shown for users sizing a machine). Model load and one warm-up batch are not timed.

Without a GPU the GPU rows say so and the CPU rows still run, so the script is checked on any machine.
Figures are saved after every row (a run stopped early keeps what it measured) to --out, then printed with
ratios and a final RESULT line.

    python experiments/bench_gpu.py --texts units.txt.gz [--parts kmeans,exam,embed] [--sizes 100000,1000000]
        [--exam-sizes 200000,1000000] [--sklearn-max-n 1000000] [--model-path DIR]
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finish import print_result, save_json  # noqa: E402
from kmeans_timing import faiss_gpus, faiss_kmeans, inertia, random_unit_vectors, sklearn_kmeans  # noqa: E402

from examiner.corpus import vectors  # noqa: E402

DIM = 384
NITER = 20


def gpu_count() -> int:
    try:
        return faiss_gpus()
    except ImportError:
        return 0


def warm_gpu() -> None:
    """One small GPU k-means, untimed: CUDA context and cuBLAS handles are made here, not in a timed row."""
    faiss_kmeans(random_unit_vectors(20_000, DIM, 99), 100, niter=NITER, gpu=True, seed=99)


class Recorder:
    """Rows of figures, saved to disk after each one so an interrupted run keeps what it measured."""

    def __init__(self, out: Path, machine: dict[str, Any]):
        self.out = out
        self.data: dict[str, Any] = {"machine": machine, "kmeans": [], "exam": [], "embed": []}

    def add(self, part: str, row: dict[str, Any]) -> None:
        self.data[part].append(row)
        print(part, " ".join(f"{k}={_fmt(v)}" for k, v in row.items()), flush=True)
        save_json(self.data, self.out)


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def bench_kmeans(rec: Recorder, sizes: list[int], k: int, sklearn_max_n: int, seed: int) -> None:
    gpus = gpu_count()
    if gpus:
        warm_gpu()
    for n in sizes:
        x = random_unit_vectors(n, DIM, seed)
        runs: list[tuple[str, Callable[[], tuple[float, float, np.ndarray]]]] = []
        if gpus:
            runs.append(("faiss_gpu", lambda x=x: faiss_kmeans(x, k, niter=NITER, gpu=True, seed=seed)))
        runs.append(("faiss_cpu", lambda x=x: faiss_kmeans(x, k, niter=NITER, gpu=False, seed=seed)))
        if n <= sklearn_max_n:
            runs.append(("sklearn", lambda x=x: sklearn_kmeans(x, k, niter=NITER, seed=seed)))
        for engine, run in runs:
            seconds, _, centroids = run()
            rec.add("kmeans", {"n": n, "k": k, "engine": engine, "seconds": seconds,
                               "inertia": inertia(x, centroids)})
        if not gpus:
            rec.add("kmeans", {"n": n, "k": k, "engine": "faiss_gpu", "seconds": None, "note": "no GPU"})
        del x


def bench_exam(rec: Recorder, sizes: list[int], cluster_size: int, seed: int) -> None:
    gpus = gpu_count()
    uses_gpu = vectors.faiss_uses_gpu
    for n in sizes:
        x = random_unit_vectors(n, DIM, seed)
        k = vectors.k_for(n, cluster_size)
        for engine in (["faiss_gpu"] if gpus else []) + ["faiss_cpu"]:
            vectors.faiss_uses_gpu = (lambda: True) if engine == "faiss_gpu" else (lambda: False)
            try:
                t = time.perf_counter()
                clustering = vectors.kmeans(x, k, seed=seed)
                seconds = time.perf_counter() - t
            finally:
                vectors.faiss_uses_gpu = uses_gpu
            sizes_ = np.bincount(clustering.labels, minlength=clustering.k)
            rec.add("exam", {"n": n, "k": k, "engine": engine, "two_level": k > vectors.FLAT_MAX_K,
                             "seconds": seconds, "max_cluster": int(sizes_.max()),
                             "median_cluster": float(np.median(sizes_))})
        if not gpus:
            rec.add("exam", {"n": n, "k": k, "engine": "faiss_gpu", "seconds": None, "note": "no GPU"})
        del x


def read_texts(path: Path, limit: int) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        texts = [line.rstrip("\n") for line in f if line.strip()]
    return texts[:limit]


def embed_rate(texts: list[str], *, device: str, batch: int, model_path: Path | None, half: bool) -> dict[str, Any]:
    import torch

    embedder = vectors.Embedder(model_path=model_path, device=device, batch_size=batch)
    model = embedder.model
    if half:
        model.half()
    embedder.embed(texts[:batch])  # warm-up batch, untimed
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    out = embedder.embed(texts)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t
    return {"device": device, "dtype": "float16" if half else "float32", "batch": batch, "texts": len(texts),
            "seconds": seconds, "texts_per_s": len(texts) / seconds, "dim": int(out.shape[1]),
            "mean_chars": sum(map(len, texts)) / len(texts)}


def bench_embed(rec: Recorder, texts_path: Path, n_gpu: int, n_cpu: int, batches: list[int],
                model_path: Path | None) -> None:
    import torch

    cuda = torch.cuda.is_available()
    texts = read_texts(texts_path, max(n_gpu, n_cpu))
    for batch in batches:
        if cuda:
            rec.add("embed", embed_rate(texts[:n_gpu], device="cuda", batch=batch, model_path=model_path, half=False))
        rec.add("embed", embed_rate(texts[:n_cpu], device="cpu", batch=batch, model_path=model_path, half=False))
    if cuda:
        rec.add("embed", embed_rate(texts[:n_gpu], device="cuda", batch=max(batches), model_path=model_path,
                                    half=True))
    else:
        rec.add("embed", {"device": "cuda", "texts_per_s": None, "note": "no GPU"})


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    try:
        import faiss

        info["faiss"] = faiss.__version__
        info["faiss_gpus"] = gpu_count()
    except ImportError:
        info["faiss"] = None
    try:
        import torch

        info["torch"] = torch.__version__
        info["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:
        info["torch"] = None
    return info


def ratio(rows: list[dict[str, Any]], slow: str, fast: str, **match: Any) -> float | None:
    """seconds(slow) / seconds(fast) for the rows matching `match`, or None when either is missing."""
    def seconds(engine: str) -> float | None:
        for row in rows:
            if row.get("engine") == engine and all(row.get(k) == v for k, v in match.items()):
                return row.get("seconds")
        return None

    a, b = seconds(slow), seconds(fast)
    return a / b if a and b else None


def summary(data: dict[str, Any], sizes: list[int], exam_sizes: list[int]) -> dict[str, str]:
    figures: dict[str, str] = {}
    for n in sizes:
        tag = f"{n // 1000}k"
        for slow in ("faiss_cpu", "sklearn"):
            r = ratio(data["kmeans"], slow, "faiss_gpu", n=n)
            figures[f"kmeans{tag}_{slow}_over_gpu"] = f"{r:.1f}" if r else "na"
    for n in exam_sizes:
        r = ratio(data["exam"], "faiss_cpu", "faiss_gpu", n=n)
        figures[f"exam{n // 1000}k_cpu_over_gpu"] = f"{r:.1f}" if r else "na"
    rates = {(row["device"], row.get("dtype"), row.get("batch")): row.get("texts_per_s") for row in data["embed"]}
    cuda, cpu = rates.get(("cuda", "float32", 64)), rates.get(("cpu", "float32", 64))
    figures["embed_cuda_texts_per_s"] = f"{cuda:.0f}" if cuda else "na"
    figures["embed_cpu_texts_per_s"] = f"{cpu:.0f}" if cpu else "na"
    figures["embed_cuda_over_cpu"] = f"{cuda / cpu:.1f}" if cuda and cpu else "na"
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="kmeans,exam,embed")
    ap.add_argument("--sizes", default="100000,1000000", help="part kmeans: vectors, comma-separated")
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--sklearn-max-n", type=int, default=1_000_000, help="part kmeans: largest n run by scikit-learn")
    ap.add_argument("--exam-sizes", default="200000,1000000", help="part exam: vectors, comma-separated")
    ap.add_argument("--cluster-size", type=int, default=6)
    ap.add_argument("--texts", type=Path, default=None, help="part embed: unit texts, one per line (.gz read too)")
    ap.add_argument("--gpu-texts", type=int, default=40_000)
    ap.add_argument("--cpu-texts", type=int, default=4_000)
    ap.add_argument("--batches", default="64,256")
    ap.add_argument("--model-path", type=Path, default=None, help="the embedding model's folder (default: bundled)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "results" / "bench_gpu.json")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    exam_sizes = [int(s) for s in args.exam_sizes.split(",") if s]
    rec = Recorder(args.out, machine())
    print("machine", rec.data["machine"], flush=True)
    if "kmeans" in parts:
        bench_kmeans(rec, sizes, args.k, args.sklearn_max_n, args.seed)
    if "exam" in parts:
        bench_exam(rec, exam_sizes, args.cluster_size, args.seed)
    if "embed" in parts:
        if args.texts is None:
            raise SystemExit("part embed needs --texts FILE (unit texts, one per line)")
        bench_embed(rec, args.texts, args.gpu_texts, args.cpu_texts,
                    [int(b) for b in args.batches.split(",")], args.model_path)
    figures = summary(rec.data, sizes if "kmeans" in parts else [], exam_sizes if "exam" in parts else [])
    rec.data["summary"] = figures
    save_json(rec.data, args.out)
    print_result(figures)


if __name__ == "__main__":
    main()
