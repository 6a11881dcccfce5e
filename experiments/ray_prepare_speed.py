"""The prepare stage's reading, sentence units and embedding, local path against the Ray Data path
(examiner.exam.ray_prepare) on a Ray instance started on this machine, on the same corpus.

Each path runs in the same process one after the other (local first, so the model files are in the page
cache for both); the Ray time includes starting and stopping the Ray instance, which a long-lived cluster
does not pay. Also checks what the test checks: same unit ids, vectors within 1e-5.

    python experiments/ray_prepare_speed.py [CORPUS ...] [--embed-workers 1]

Default corpus: the first file of experiments/scale_corpus.py (about 2,000 units of WikiText-2), written
to a temporary folder. Prints a line per path and a final
`RESULT ...` line; writes experiments/results/ray_prepare_speed.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finish import RESULTS, print_result, save_json  # noqa: E402
from scale_corpus import write_parts  # noqa: E402

from examiner.core.config import ExamSettings  # noqa: E402
from examiner.corpus.reading import load_corpus  # noqa: E402
from examiner.exam.ray_prepare import prepare_on_ray  # noqa: E402
from examiner.corpus.units import sentence_units, split_oversized  # noqa: E402
from examiner.corpus.vectors import Embedder  # noqa: E402

SPLIT_LIMIT = 16_384 // 8
"""The oversize bound of an examiner with a 16k-token context (prepare_units: context_tokens // 8)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--embed-workers", type=int, default=1, help="Ray embedding workers (default 1)")
    args = parser.parse_args()
    paths = args.paths or [str(write_parts(Path(tempfile.mkdtemp(prefix="ray-prepare-")), 1)[0])]
    exam = ExamSettings()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    t0 = time.perf_counter()
    units = split_oversized(sentence_units(load_corpus(paths), max_tokens=exam.max_unit_tokens,
                                           min_tokens=exam.min_unit_tokens), SPLIT_LIMIT)
    vectors = Embedder().embed([u.text for u in units])
    local_s = time.perf_counter() - t0
    print(f"local: {len(units)} units in {local_s:.1f} s ({len(units) / local_s:.1f} units/s)")

    t0 = time.perf_counter()
    prepared = prepare_on_ray(paths, jsonl_field="text", max_tokens=exam.max_unit_tokens,
                              min_tokens=exam.min_unit_tokens, split_limit=SPLIT_LIMIT,
                              embed_workers=args.embed_workers)
    ray_s = time.perf_counter() - t0
    print(f"ray:   {len(prepared.units)} units in {ray_s:.1f} s ({len(prepared.units) / ray_s:.1f} units/s, "
          f"Ray start and stop included)")

    same_ids = [u.id for u in prepared.units] == [u.id for u in units]
    max_diff = float(abs(prepared.vectors - vectors).max()) if same_ids else float("nan")
    figures = {"units": len(units), "cpus": os.cpu_count(), "local_s": round(local_s, 1), "ray_s": round(ray_s, 1),
               "local_units_per_s": round(len(units) / local_s, 1), "ray_units_per_s": round(len(units) / ray_s, 1),
               "same_ids": same_ids, "max_vector_diff": f"{max_diff:.2e}"}
    save_json({"paths": paths, "embed_workers": args.embed_workers, **figures}, RESULTS / "ray_prepare_speed.json")
    print_result(figures)


if __name__ == "__main__":
    main()
