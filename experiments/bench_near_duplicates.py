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
default width's.

    python experiments/bench_near_duplicates.py --corpus /tmp/scale/corpus \\
        --embedding-cache /tmp/scale/emb.sqlite --parts 1,25,180 [--dims 16,24,32,48]

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

from examiner.corpus.close_pairs import PROJECTED_DIMS, close_pairs  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="folder of part-NNN.txt files (scale_corpus.py)")
    ap.add_argument("--embedding-cache", type=Path, required=True)
    ap.add_argument("--parts", default="1,25,180", help="comma-separated corpus sizes in files")
    ap.add_argument("--dims", default="", help="comma-separated projection widths to time close_pairs at")
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
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    print(f"threshold {threshold}; default projection {PROJECTED_DIMS} dimensions; "
          f"texts encoded: {embedder.encoded_texts}")
    save_json({"threshold": threshold, "sizes": rows}, args.out)
    last = rows[-1]
    print_result({"units": last["units"], "full_cpu_s": last["full_cpu_s"], "pruned_cpu_s": last["pruned_cpu_s"],
                  "cpu_ratio": last["cpu_ratio"], "identical": all(r["identical"] for r in rows)})


if __name__ == "__main__":
    main()
