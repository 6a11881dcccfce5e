"""The memorisation probe for real: the embedded local model (SmolLM2) on a sample of WikiText-2 articles
(public Wikipedia text, very likely in its training data) against corpora/examiner-handbook (written for
this project, after its cutoff), through `examiner probe-memory`'s API: guided versus general completion
and each probed sentence's Min-K%++ (exact, from the model's full logits).

    EXAMINER_DATA=... python experiments/memory_probe.py [--articles 10] [--sentences 4] [--target local]

The articles are read from the data folder at run time and written into a temporary folder outside the
repository for the run (deleted after it); the probe's own folder (completions quote the articles) is
temporary too unless --keep DIR. Only aggregate figures are saved (experiments/results/memory_probe.json).
`--simulate` runs the same on the simulated backend (a target that has read nothing): a check of the
plumbing, whose AUROC interval should hold 0.5 in about 95 % of seeds (nothing is saved).

RESULT names: corpus_gap (mean guided-minus-general ROUGE-L over articles, with _low/_high), control_gap
(same over handbook documents), auroc (+ _low/_high: Newcombe's interval), corpus_words / control_words
(mean words held back, the length side of the confound), exact_corpus / exact_control (guided completions
that reproduced the held-back half word for word), calls, wall_s; corpus_min_k / control_min_k (mean
Min-K%++ over documents, k = 20 %, with _low/_high), min_k_auroc (+ _low/_high), min_k_diff (corpus minus
control, with Welch's _low/_high); "nan" where Min-K%++ was not computed (a target without full logits).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finish import RESULTS, print_result, save_json  # noqa: E402


def write_sample(folder: Path, articles: int, seed: int) -> int:
    """`articles` seeded WikiText-2 test articles with at least 8 prose sentences, one file each (title on
    the first line); how many were written."""
    from examiner.corpus.benchmarks import load_wikitext2
    from examiner.exam.memory_probe import _is_prose, prose_sentences

    pool = [a for a in load_wikitext2("test")
            if "<unk>" not in a.title and sum(map(_is_prose, prose_sentences(a.text))) >= 8]
    chosen = random.Random(seed).sample(pool, min(articles, len(pool)))
    for i, article in enumerate(chosen):
        slug = re.sub(r"[^a-z0-9]+", "-", article.title.lower()).strip("-")[:40]
        (folder / f"{i:02d}-{slug}.txt").write_text(f"{article.title}\n\n{article.text}\n", encoding="utf-8")
    return len(chosen)


def min_k_result(summary: dict[str, Any]) -> dict[str, str]:
    """The Min-K%++ RESULT fields ("nan" where it was not computed)."""
    nan = {"mean": math.nan, "low": math.nan, "high": math.nan}
    sides = {side: summary["sides"][side].get("min_k_plus_plus", nan) for side in ("corpus", "control")}
    auroc = summary.get("min_k_auroc", {"auroc": math.nan, "low": math.nan, "high": math.nan})
    diff = summary.get("min_k_difference", {"estimate": math.nan, "low": math.nan, "high": math.nan})
    out = {}
    for side, fig in sides.items():
        out |= {f"{side}_min_k": f"{fig['mean']:.3f}", f"{side}_min_k_low": f"{fig['low']:.3f}",
                f"{side}_min_k_high": f"{fig['high']:.3f}"}
    return out | {"min_k_auroc": f"{auroc['auroc']:.3f}", "min_k_auroc_low": f"{auroc['low']:.3f}",
                  "min_k_auroc_high": f"{auroc['high']:.3f}", "min_k_diff": f"{diff['estimate']:.3f}",
                  "min_k_diff_low": f"{diff['low']:.3f}", "min_k_diff_high": f"{diff['high']:.3f}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", default=None, help="endpoint (default: the candidate role's, the local model)")
    parser.add_argument("--simulate", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="keep the probe's folder (completions quote the articles)")
    args = parser.parse_args()
    if not os.environ.get("EXAMINER_DATA"):
        print("memory_probe: EXAMINER_DATA is not set (the folder holding wikitext2/test.txt)", file=sys.stderr)
        return 2
    from examiner.api.memory_probe import MemoryProbeOptions, probe_memory

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memory-probe-") as tmp:
        sample = Path(tmp) / "wikitext2-sample"
        sample.mkdir()
        n = write_sample(sample, args.articles, args.seed)
        out = args.keep or str(Path(tmp) / "probe")
        options = MemoryProbeOptions(corpus=(str(sample),), out=out, target=args.target, sentences=args.sentences,
                                     max_documents=None, seed=args.seed, source_name="Wikipedia",
                                     control_name="the examiner handbook", simulate=args.simulate, quiet=True)
        report = probe_memory(options).report.model_dump(exclude_unset=True)  # the figures as the file holds them
    s = report["summary"]
    corpus, control = s["sides"]["corpus"], s["sides"]["control"]
    figures = {
        "target": report["target"], "articles": n, "sentences_per_document": args.sentences, "seed": args.seed,
        "corpus": {k: corpus[k] for k in ("documents", "sentences", "gap", "guided_rouge_l", "general_rouge_l",
                                          "guided_exact", "general_exact", "ending_words")},
        "control": {k: control[k] for k in ("documents", "sentences", "gap", "guided_rouge_l", "general_rouge_l",
                                            "guided_exact", "general_exact", "ending_words")},
        "auroc": s["auroc"], "difference": s["difference"],
        "min_k_plus_plus": {**report["min_k_plus_plus"], "corpus": corpus.get("min_k_plus_plus"),
                            "control": control.get("min_k_plus_plus"), "auroc": s.get("min_k_auroc"),
                            "difference": s.get("min_k_difference")},
        "calls": report["calls"], "status": report["status"],
        "failed": report["failed"], "wall_s": round(time.perf_counter() - started, 1),
    }
    if not args.simulate:  # the simulated run checks the plumbing; its figures are not kept
        save_json(figures, RESULTS / "memory_probe.json")
    print_result({
        "corpus_gap": f"{corpus['gap']['mean']:.3f}", "corpus_gap_low": f"{corpus['gap']['low']:.3f}",
        "corpus_gap_high": f"{corpus['gap']['high']:.3f}", "control_gap": f"{control['gap']['mean']:.3f}",
        "control_gap_low": f"{control['gap']['low']:.3f}", "control_gap_high": f"{control['gap']['high']:.3f}",
        "auroc": f"{s['auroc']['auroc']:.3f}", "auroc_low": f"{s['auroc']['low']:.3f}",
        "auroc_high": f"{s['auroc']['high']:.3f}", "corpus_words": f"{corpus['ending_words']['mean']:.1f}",
        "control_words": f"{control['ending_words']['mean']:.1f}", "exact_corpus": corpus["guided_exact"],
        "exact_control": control["guided_exact"], "calls": report["calls"], "wall_s": figures["wall_s"],
        **min_k_result(s)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
