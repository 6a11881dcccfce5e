"""How a large text goes through the exam's prepare stage (corpus -> passages -> knowledge units), with no
model call.

A synthetic text of --mb megabytes is built in a temporary folder from WikiText-2 valid + test (raw files
of the data folder: examiner data pull wikitext2), copy after copy, each copy's sentences numbered "(copy)" so that no two
copies make the same unit. Each measurement runs in a fresh process, so its peak memory
(resource.getrusage ru_maxrss) is its own:

1. split: `load_corpus` + `sentence_units` on the whole text (the part of the prepare node that reads,
   splits and segments): passages, units, seconds, peak memory.
2. node: the whole prepare node (`examiner.exam.bookends.prepare_units`: units, embeddings with the
   bundled all-MiniLM-L6-v2, near-duplicate merging, units.jsonl and passages written) on the first
   --node-mb megabytes; its units per second give the projected time of the node on the whole text.
3. refuse: `examiner estimate TEXT --simulate` on the whole text, which `exam.max_corpus_mb` (default 10)
   refuses before anything is created: exit code, seconds, its stderr line.

Prints a table and a final `RESULT ...` line; writes experiments/results/large_corpus.json. The text is
deleted afterwards (never committed).

    python experiments/large_corpus.py [--mb 50] [--node-mb 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finish import RESULTS, print_result, save_json  # noqa: E402

from examiner.core.config import ExamSettings  # noqa: E402
from examiner.corpus.benchmarks import data_file  # noqa: E402


def build_text(path: Path, megabytes: float) -> int:
    """Write about `megabytes` MB (characters) of numbered WikiText-2 copies to `path`, the last copy cut at
    a paragraph; returns the copies begun."""
    source = "".join(data_file("wikitext2", f"{split}.txt").read_text(encoding="utf-8") for split in ("valid", "test"))
    copies, left = 0, int(megabytes * 1e6)
    with open(path, "w", encoding="utf-8") as fh:
        while left > 0:
            copies += 1
            text = source.replace(" . ", f" . ({copies}) ")
            if len(text) > left:  # the last copy: up to the paragraph break before the size
                fh.write(text[:max(text.rfind("\n \n", 0, left), 1)])
                break
            left -= fh.write(text)
    return copies


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def child_split(text: Path) -> dict[str, float]:
    from examiner.corpus.reading import load_corpus
    from examiner.corpus.units import sentence_units

    start = time.perf_counter()
    corpus = load_corpus(text)
    loaded = time.perf_counter()
    units = sentence_units(corpus)
    done = time.perf_counter()
    return {"passages": len(corpus.passages), "units": len(units), "load_s": loaded - start,
            "units_s": done - loaded, "seconds": done - start, "peak_mb": peak_mb()}


def child_node(text: Path, run_dir: Path) -> dict[str, float]:
    from examiner.core.config import Settings
    from examiner.core.records import RunInfo
    from examiner.exam.bookends import prepare_units
    from examiner.exam.nodes.context import ExamContext
    from examiner.exam.progress import ExamProgress
    from examiner.exam.run_writer import RunStore
    from examiner.llm.gateway import Totals
    from examiner.corpus.vectors import Embedder

    settings = Settings().merged({"exam": {"max_corpus_mb": 1000}})
    store = RunStore(run_dir)
    store.write_info(RunInfo(run_id="large", targets=["candidate"], corpus_paths=[str(text)]))
    embedder = Embedder()
    embedder.embed(["load the model before the clock starts"])
    # Sentence units make no model call: the prepare node needs no gateway, exam mode or judge.
    ctx = ExamContext(settings=settings, gateway=None, store=store, embedder=embedder,  # type: ignore[arg-type]
                      targets=["candidate"], mode=None, judge=None,  # type: ignore[arg-type]
                      progress=ExamProgress(Totals(), enabled=sys.stderr.isatty()))
    start = time.perf_counter()
    asyncio.run(prepare_units(ctx, [str(text)], "text"))
    seconds = time.perf_counter() - start
    info = store.read_info()
    return {"passages": info.passages, "units": info.units, "embedded": embedder.encoded_texts - 1,
            "seconds": seconds, "peak_mb": peak_mb()}


def in_child(step: str, *paths: Path) -> dict[str, float]:
    """One measurement in a fresh interpreter (its own peak memory)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, __file__, "--child", step, *map(str, paths)], env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def refuse(text: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "examiner.cli.main", "estimate", str(text), "--simulate"], env=env,
                          capture_output=True, text=True)
    return {"rc": proc.returncode, "seconds": time.perf_counter() - start, "stderr": proc.stderr.strip()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--node-mb", type=float, default=1)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    limit = ExamSettings().max_corpus_mb
    if not args.child and args.mb <= limit:
        parser.error(f"--mb must be above the default limit exam.max_corpus_mb = {limit:g} (the refusal is measured)")
    if args.child:
        step, *paths = args.child
        figures = child_split(Path(paths[0])) if step == "split" else child_node(Path(paths[0]), Path(paths[1]))
        print(json.dumps(figures))
        return
    with tempfile.TemporaryDirectory(prefix="large-corpus-") as scratch:
        big, small = Path(scratch) / "big.txt", Path(scratch) / "small.txt"
        copies = build_text(big, args.mb)
        build_text(small, args.node_mb)
        size_mb = big.stat().st_size / 1e6
        split = in_child("split", big)
        node = in_child("node", small, Path(scratch) / "run")
        refused = refuse(big)
    node_mb = args.node_mb
    per_s = node["units"] / node["seconds"]
    projected_min = split["units"] / per_s / 60
    print(f"text: {size_mb:.1f} MB ({copies} numbered copies of WikiText-2 valid+test), {os.cpu_count()} CPU cores")
    print(f"split + sentence units: {split['passages']:,} passages, {split['units']:,} units in "
          f"{split['seconds']:.1f} s (load {split['load_s']:.1f} s), peak {split['peak_mb']:.0f} MB")
    print(f"prepare node on {node_mb:g} MB: {node['units']:,} units in {node['seconds']:.1f} s "
          f"({per_s:.0f} units/s), peak {node['peak_mb']:.0f} MB; the node on {size_mb:.0f} MB: "
          f"about {projected_min:.0f} min (embedding, linear) plus the near-duplicate search")
    print(f"estimate on {size_mb:.0f} MB: exit {refused['rc']} in {refused['seconds']:.1f} s: {refused['stderr']}")
    save_json({"settings": vars(args), "size_mb": size_mb, "copies": copies, "split": split, "node": node,
               "refuse": refused, "projected_node_min": projected_min}, RESULTS / "large_corpus.json")
    print_result({"mb": f"{size_mb:.1f}", "passages": split["passages"], "units": split["units"],
                  "split_s": f"{split['seconds']:.1f}", "split_peak_mb": f"{split['peak_mb']:.0f}",
                  "node_mb": f"{node_mb:g}", "node_units": node["units"], "node_s": f"{node['seconds']:.1f}",
                  "node_units_per_s": f"{per_s:.0f}", "node_peak_mb": f"{node['peak_mb']:.0f}",
                  "projected_node_min": f"{projected_min:.0f}", "refuse_rc": refused["rc"],
                  "refuse_s": f"{refused['seconds']:.1f}"})


if __name__ == "__main__":
    main()
