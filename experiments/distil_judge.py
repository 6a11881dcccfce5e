"""Distil a local judge (issue 30, JudgeLM): agreement with the teacher on held-out pairs before and after
LoRA fine-tuning of the embedded SmolLM2-135M, on this machine's CPU (docs/DISTIL.md).

Steps: `examiner distil` of an LLMBar subset (the teacher: the dataset's gold labels; the repository ships
no released GPT-4 verdicts of LLMBar or PandaLM, see docs/DISTIL.md) -> the base model judges every
held-out example (both orders, examiner's pairwise prompt, greedy, grade line parsed by examiner's
parse_score_line) -> judge-stats metrics against the teacher (agreement, macro P/R/F1, swap consistency,
position bias; an unparseable reply counts as a disagreement) -> `examiner finetune` bounded by
--max-minutes -> the merged model judges the same examples -> the same metrics.

Run: python experiments/distil_judge.py [--data llmbar:Natural] [--max-minutes 10] [--limit N] [--threads 2]
     [--max-length TOKENS] [--grad-accum N] [--learning-rate LR]
Writes experiments/results/distil_judge.json and ends with
`RESULT agreement_before=.. agreement_after=.. train_s=.. peak_rss_gb=..`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from finish import print_result, save_json  # noqa: E402

from examiner.agents.parsing import parse_score_line  # noqa: E402
from examiner.api.distil import DistilOptions, distil  # noqa: E402
from examiner.api.finetune import FinetuneOptions, finetune  # noqa: E402
from examiner.api.judging import JudgeStatsOptions, judge_stats  # noqa: E402
from examiner.judging.finetune import peak_rss_gb  # noqa: E402
from examiner.llm.hf_models import generate_reply, load_model, resolve_base  # noqa: E402

ORIGINAL_LABEL = {("original", "first"): 1, ("original", "second"): 2, ("swapped", "first"): 2,
                  ("swapped", "second"): 1, ("original", "tie"): 0, ("swapped", "tie"): 0}


def judge_examples(folder: Path, rows: list[dict[str, Any]], max_length: int, out: Path) -> tuple[Path, float]:
    """Judge each held-out example with the model in `folder`; judge-stats records (verdicts in the
    original labelling) written to `out`; (path, seconds)."""
    model, tokenizer = load_model(folder, device="cpu")
    model.eval()
    began = time.monotonic()
    with out.open("w") as f:
        for row in rows:
            text, _, _ = generate_reply(model, tokenizer, row["messages"][:-1], max_new_tokens=8,
                                        max_prompt_tokens=max_length)
            line = parse_score_line(text)
            verdict = None
            if line.score_1 is not None and line.score_2 is not None:
                shown = 0 if line.score_1 == line.score_2 else (1 if line.score_1 > line.score_2 else 2)
                verdict = shown if row["order"] == "original" or shown == 0 else 3 - shown
            f.write(json.dumps({"id": row["group"], "order": row["order"], "verdict": verdict,
                                "label": ORIGINAL_LABEL[(row["order"], row["label"])], "reply": text}) + "\n")
    return out, time.monotonic() - began


def metrics(path: Path) -> dict[str, Any]:
    """judge-stats' pairwise figures against the teacher (unparseable = wrong)."""
    report = judge_stats(JudgeStatsOptions(judgments=str(path), unparseable="wrong"), notes=lambda _: None).report
    pairwise = report["pairwise"]
    agreement, swap = pairwise["agreement"], pairwise["swap"]
    return {"agreement": agreement["accuracy"], "macro_precision": agreement["macro_precision"],
            "macro_recall": agreement["macro_recall"], "macro_f1": agreement["macro_f1"], "n": agreement["n"],
            "unparseable": pairwise["n_unparseable"], "swap_consistency": swap["consistency"],
            "bias_first": swap["bias_first"], "bias_second": swap["bias_second"],
            "pairs_both_orders": swap["n_pairs_both_orders"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="llmbar:Natural")
    parser.add_argument("--max-minutes", type=float, default=10.0)
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--max-length", type=int, default=768, help="tokens per example (prompts lose the middle)")
    parser.add_argument("--grad-accum", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--limit", type=int, help="held-out examples judged (default all)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--work", help="working folder (default: a temporary one)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    began = time.monotonic()
    work = Path(args.work or tempfile.mkdtemp(prefix="distil_judge_"))
    data = work / "distil"
    if not (data / "train.jsonl").is_file():
        distil(DistilOptions(out=str(data), data=args.data))
    rows = [json.loads(line) for line in (data / "validation.jsonl").read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["kind"] == "pairwise"][: args.limit]
    train_n = sum(1 for line in (data / "train.jsonl").read_text().splitlines() if line.strip())
    base = resolve_base("smollm2")
    before_path, before_s = judge_examples(base, rows, args.max_length, work / "judgments_before.jsonl")
    before = metrics(before_path)
    print(f"before: {before} ({before_s:.0f} s)", flush=True)
    result = finetune(FinetuneOptions(data=str(data), out=str(work / "judge"), base="smollm2", device="cpu",
                                      max_steps=args.max_steps, max_minutes=args.max_minutes,
                                      max_length=args.max_length, grad_accum=args.grad_accum,
                                      learning_rate=args.learning_rate, save_every=5))
    after_path, after_s = judge_examples(work / "judge" / "merged", rows, args.max_length,
                                         work / "judgments_after.jsonl")
    after = metrics(after_path)
    print(f"after: {after} ({after_s:.0f} s)", flush=True)
    figures = {"agreement_before": f"{before['agreement']:.3f}", "agreement_after": f"{after['agreement']:.3f}",
               "train_s": f"{result.train_s:.0f}", "peak_rss_gb": f"{peak_rss_gb():.2f}"}
    save_json({"settings": vars(args), "work": str(work), "train_examples": train_n, "heldout_examples": len(rows),
               "teacher": "gold labels of " + args.data, "before": before, "after": after,
               "judge_before_s": before_s, "judge_after_s": after_s,
               "finetune": {"steps": result.steps, "stopped": result.stopped, "first_loss": result.first_loss,
                            "last_loss": result.last_loss, "train_s": result.train_s,
                            "examples_seen": result.steps * args.grad_accum},
               "wall_s": time.monotonic() - began, "peak_rss_gb": peak_rss_gb(),
               "torch_threads": args.threads, "cpus": os.cpu_count()},
              ROOT / "experiments" / "results" / "distil_judge.json")
    print_result(figures)


if __name__ == "__main__":
    main()
