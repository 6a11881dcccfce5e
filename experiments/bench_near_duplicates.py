"""The near-duplicate merge's search against a full comparison of every pair, on real unit vectors.

For each size (the first N files of experiments/scale_corpus.py's corpus, bench_scale's units before the
merge), the unit vectors come from --embedding-cache (texts it lacks are encoded and added). Then, one
after the other in this process:

- full: every pair compared in 384 dimensions, 2,048-row blocks of float32 products against all rows,
  kept at >= threshold, then connected components: the merge's search before examiner.corpus.close_pairs;
- pruned: examiner.corpus.units.near_duplicate_groups (close_pairs, then the same connected components).

Printed per size: units, groups left, CPU and wall seconds of each, full / pruned CPU, and whether the
multi-member groups are identical. Threshold: the exam's default dedup_threshold. With --dims, the pair
search alone (close_pairs) is also timed at each listed projection width, its pairs checked against the
default width's. With --probed, the probed search (close_pairs.probed_close_pairs, what close_pairs uses
above EXACT_UP_TO rows) is timed too, and the pairs it misses counted against the exact search's.

Sizes past what the embedding cache holds: --composed 200000,1000000 builds rows from the largest --parts
size's unit vectors, each row w * a + (1 - w) * b of two drawn unit vectors (w uniform in [0.5, 1],
seed 0; "first , and second" as scale_corpus.py joins sentences), scaled to length 1. These are not any
text's embedding, and they are harder than real units for the probed search: every unit vector is the
larger part of about n / units rows, so they form dense cliques of near-copies. For each composed size the
probed search runs, and the exact one too up to --exact-max rows (it grows as n^2).

    python experiments/bench_near_duplicates.py --corpus /tmp/scale/corpus \\
        --embedding-cache /tmp/scale/emb.sqlite --parts 1,25,180 [--dims 16,24,32,48] [--probed]
    python experiments/bench_near_duplicates.py --corpus /tmp/hb/corpus --embedding-cache /tmp/hb/emb.sqlite \\
        --parts 10 --probed --composed 200000,1000000

Writes experiments/results/bench_near_duplicates.json (or --out); the RESULT line holds the largest size's figures
and whether every size gave identical groups.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finish import RESULTS, print_result, save_json  # noqa: E402
from prefill_vectors import unit_texts  # noqa: E402

from examiner.corpus.close_pairs import PROJECTED_DIMS, close_pairs, probed_close_pairs  # noqa: E402
from examiner.core.config import ExamSettings  # noqa: E402
from examiner.corpus.units import linked_groups, near_duplicate_groups, unit_rows  # noqa: E402
from examiner.corpus.vectors import Embedder, EmbeddingCache  # noqa: E402

T = TypeVar("T")


def full_comparison_groups(x: np.ndarray, threshold: float, block: int = 2048) -> list[list[int]]:
    """Every row against every row (the reference): groups linked by float32 dot >= threshold."""
    n = len(x)
    block = max(1, min(block, 2**24 // n))
    firsts, seconds = [], []
    for lo in range(0, n, block):
        rows, cols = np.nonzero(x[lo:lo + block] @ x.T >= threshold)
        rows += lo
        later = rows < cols
        firsts.append(rows[later])
        seconds.append(cols[later])
    return linked_groups(n, np.concatenate(firsts), np.concatenate(seconds))


def timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float, float]:
    """fn's result, with the CPU and wall seconds it took."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.process_time() - cpu, time.perf_counter() - wall


def composed_rows(units: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """n rows, each w * a + (1 - w) * b of two rows of `units` drawn at random (w uniform in [0.5, 1]),
    scaled to length 1; built 100,000 at a time so the temporaries stay small."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, units.shape[1]), dtype=np.float32)
    for lo in range(0, n, 100_000):
        m = min(100_000, n - lo)
        a, b = rng.integers(0, len(units), m), rng.integers(0, len(units), m)
        w = rng.uniform(0.5, 1.0, m).astype(np.float32)[:, None]
        out[lo:lo + m] = unit_rows(units[a] * w + units[b] * (1 - w))
    return out


def probed_against(x: np.ndarray, threshold: float, exact: tuple[np.ndarray, np.ndarray] | None) -> dict[str, Any]:
    """The probed search's time and pairs, and against the exact pairs (when given) what it missed and the
    units each leaves after the merge."""
    (first, second), cpu, wall = timed(probed_close_pairs, x, threshold)
    row: dict[str, Any] = {"probed_cpu_s": round(cpu, 1), "probed_wall_s": round(wall, 1), "probed_pairs": len(first)}
    if exact is not None:
        found = set(zip(first.tolist(), second.tolist()))
        reference = set(zip(exact[0].tolist(), exact[1].tolist()))
        row["exact_pairs"] = len(reference)
        row["probed_missed"] = len(reference - found)
        row["probed_extra"] = len(found - reference)
        row["units_left_exact"] = len(linked_groups(len(x), *exact))
        row["units_left_probed"] = len(linked_groups(len(x), first, second))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="folder of part-NNN.txt files (scale_corpus.py)")
    ap.add_argument("--embedding-cache", type=Path, required=True)
    ap.add_argument("--parts", default="1,25,180", help="comma-separated corpus sizes in files")
    ap.add_argument("--dims", default="", help="comma-separated projection widths to time close_pairs at")
    ap.add_argument("--probed", action="store_true", help="time the probed search too, and count what it misses")
    ap.add_argument("--composed", default="", help="comma-separated sizes of composed rows (see above)")
    ap.add_argument("--exact-max", type=int, default=250_000, help="largest composed size also searched exactly")
    ap.add_argument("--out", type=Path, default=RESULTS / "bench_near_duplicates.json")
    args = ap.parse_args()
    threshold = ExamSettings().dedup_threshold
    embedder = Embedder(cache=EmbeddingCache(str(args.embedding_cache)))
    rows = []
    for parts in (int(p) for p in args.parts.split(",")):
        texts = unit_texts(args.corpus, parts)
        x = unit_rows(embedder.embed(texts))
        full, full_cpu, full_wall = timed(full_comparison_groups, x, threshold)
        pruned, cpu, wall = timed(near_duplicate_groups, x, threshold)
        row = {"parts": parts, "units": len(x), "groups": len(pruned), "full_cpu_s": round(full_cpu, 1),
               "full_wall_s": round(full_wall, 1), "pruned_cpu_s": round(cpu, 1), "pruned_wall_s": round(wall, 1),
               "cpu_ratio": round(full_cpu / cpu, 2),
               "identical": [g for g in full if len(g) > 1] == [g for g in pruned if len(g) > 1]}
        if args.dims:
            reference = close_pairs(x, threshold)
            for dims in (int(d) for d in args.dims.split(",")):
                pairs, cpu, wall = timed(close_pairs, x, threshold, dims=dims)
                row[f"dims{dims}_cpu_s"] = round(cpu, 1)
                row[f"dims{dims}_same"] = all(np.array_equal(a, b) for a, b in zip(pairs, reference))
        if args.probed:
            row.update(probed_against(x, threshold, close_pairs(x, threshold)))
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    composed = []
    for size in (int(c) for c in args.composed.split(",") if c):
        y = composed_rows(x, size)
        row = {"composed": size, "from_units": len(x)}
        exact = None
        if size <= args.exact_max:
            exact, cpu, wall = timed(close_pairs, y, threshold, exact_up_to=size)
            row.update({"exact_cpu_s": round(cpu, 1), "exact_wall_s": round(wall, 1)})
        row.update(probed_against(y, threshold, exact))
        composed.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    print(f"threshold {threshold}; default projection {PROJECTED_DIMS} dimensions; "
          f"texts encoded: {embedder.encoded_texts}")
    save_json({"threshold": threshold, "sizes": rows, "composed": composed}, args.out)
    last = rows[-1]
    result = {"units": last["units"], "full_cpu_s": last["full_cpu_s"], "pruned_cpu_s": last["pruned_cpu_s"],
              "cpu_ratio": last["cpu_ratio"], "identical": all(r["identical"] for r in rows)}
    if args.probed:
        result.update({"probed_cpu_s": last["probed_cpu_s"], "probed_missed": last["probed_missed"]})
    for row in composed:
        size = row["composed"]
        result[f"composed{size}_probed_cpu_s"] = row["probed_cpu_s"]
        if "exact_cpu_s" in row:
            result[f"composed{size}_exact_cpu_s"] = row["exact_cpu_s"]
            result[f"composed{size}_missed"] = row["probed_missed"]
            result[f"composed{size}_units_left_diff"] = row["units_left_probed"] - row["units_left_exact"]
    print_result(result)


if __name__ == "__main__":
    main()
