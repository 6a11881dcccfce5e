"""Distil a local judge (issue 30, JudgeLM): agreement with the teacher on held-out pairs before and after
LoRA fine-tuning of the embedded SmolLM2-135M, on this machine's CPU (docs/DISTIL.md).

Steps: `examiner distil` of LLMBar's human-labelled sets (Natural and the three Processed sets by default;
the teacher: the datasets' gold labels; the repository ships no released GPT-4 verdicts, see
docs/DISTIL.md), split by item -> the base model judges every held-out example (both orders, examiner's
pairwise prompt, greedy, grade line parsed by examiner's parse_score_line) -> `examiner finetune` bounded
by --max-minutes -> the merged model judges the same examples.

Reported for each judge and for baselines computed on the same held-out examples (always first, always
second, the longer answer wins): agreement with the teacher (an unparseable reply counts as a
disagreement) with a 95 % interval clustered by item (examiner.stats.accuracy_interval: both orders of
a pair are not independent), judge-stats' macro P/R/F1, swap consistency and position bias; the paired
difference after - before and after - longer-answer (examiner.stats.compare_paired, McNemar); agreement
per dataset. Nothing is tuned on the held-out examples: the settings are fixed before the run.

Run: python experiments/distil_judge.py [--data SPEC ...] [--max-minutes 25] [--pairs N] [--before-pairs N]
     [--judge-minutes M] [--threads N] [--max-length TOKENS] [--grad-accum N] [--learning-rate LR] [--work DIR]
(--threads 1 on a CPU busy with other work: docs/DISTIL.md. With --work, the base model's verdicts from an
earlier run in that folder on the same examples are reused.)
Writes experiments/results/distil_judge.json and ends with
`RESULT agreement_before=.. agreement_after=.. train_s=.. peak_rss_gb=..`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
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
from examiner.stats.intervals import accuracy_interval  # noqa: E402
from examiner.stats.paired import compare_paired  # noqa: E402

DATA = ["llmbar:Natural", "llmbar:Processed_MT-Bench_200", "llmbar:Processed_FairEval", "llmbar:Processed_LLMEval2"]
ORIGINAL_LABEL = {("original", "first"): 1, ("original", "second"): 2, ("swapped", "first"): 2,
                  ("swapped", "second"): 1, ("original", "tie"): 0, ("swapped", "tie"): 0}
ANSWER = {k: re.compile(rf"<answer_{k}>\n?(.*?)\n?</answer_{k}>", re.S) for k in (1, 2)}


def heldout(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per example: item, order, the teacher's label and both answers' lengths in the original order."""
    out = []
    for row in rows:
        user = row["messages"][1]["content"]
        shown = [len(m.group(1)) if (m := ANSWER[k].search(user)) else 0 for k in (1, 2)]
        lengths = shown if row["order"] == "original" else shown[::-1]
        out.append({"id": row["group"], "order": row["order"], "label": ORIGINAL_LABEL[(row["order"], row["label"])],
                    "dataset": (row.get("meta") or {}).get("dataset", "?"), "len_1": lengths[0], "len_2": lengths[1]})
    return out


def shown_to_original(order: str, shown: int | None) -> int | None:
    """A verdict on the answers as shown (1, 2, 0 = tie) in the original labelling."""
    if shown is None or order == "original" or shown == 0:
        return shown
    return 3 - shown


def judge_examples(folder: Path, rows: list[dict[str, Any]], items: list[dict[str, Any]], max_length: int,
                   out: Path, minutes: float | None = None) -> tuple[Path, float]:
    """Judge each held-out example with the model in `folder` (stopping at a pair's end once `minutes` have
    passed, so that a loaded machine cannot push the run past its slot); judge-stats records (verdicts in
    the original labelling) written to `out`; (path, seconds)."""
    model, tokenizer = load_model(folder, device="cpu")
    model.eval()
    began = time.monotonic()
    records = []
    for number, (row, item) in enumerate(zip(rows, items), 1):
        if minutes and number % 2 == 1 and time.monotonic() - began > minutes * 60:
            print(f"  stopped after {number - 1} examples: {minutes} minutes of judging", flush=True)
            break
        text, _, _ = generate_reply(model, tokenizer, row["messages"][:-1], max_new_tokens=8,
                                    max_prompt_tokens=max_length)
        line = parse_score_line(text)
        shown = None
        if line.score_1 is not None and line.score_2 is not None:
            shown = 0 if line.score_1 == line.score_2 else (1 if line.score_1 > line.score_2 else 2)
        records.append({**item, "verdict": shown_to_original(row["order"], shown), "reply": text})
        if number % 25 == 0:
            print(f"  judged {number}/{len(rows)} ({(time.monotonic() - began) / number:.2f} s each, "
                  f"load {os.getloadavg()[0]:.1f})", flush=True)
    write(records, out)
    return out, time.monotonic() - began


def write(records: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def baseline(items: list[dict[str, Any]], rule: Callable[[dict[str, Any]], int], path: Path) -> Path:
    """Records of a rule that decides from the item alone (its verdict in the original labelling)."""
    return write([{**item, "verdict": rule(item)} for item in items], path)


def always(shown: int) -> Callable[[dict[str, Any]], int]:
    return lambda item: shown_to_original(item["order"], shown) or 0


def longer(item: dict[str, Any]) -> int:
    return 0 if item["len_1"] == item["len_2"] else (1 if item["len_1"] > item["len_2"] else 2)


def outcomes(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def metrics(path: Path) -> dict[str, Any]:
    """judge-stats' pairwise figures against the teacher (unparseable = wrong), the agreement's interval
    clustered by item, and agreement per dataset."""
    report = judge_stats(JudgeStatsOptions(judgments=str(path), unparseable="wrong"), notes=lambda _: None).report
    pairwise = report["pairwise"]
    agreement, swap = pairwise["agreement"], pairwise["swap"]
    records = outcomes(path)
    correct = [int(r["verdict"] == r["label"]) for r in records]
    interval = accuracy_interval(correct, [r["id"] for r in records])
    per_dataset: dict[str, list[int]] = {}
    for r, c in zip(records, correct):
        per_dataset.setdefault(r["dataset"], []).append(c)
    return {"agreement": agreement["accuracy"], "agreement_low": interval.low, "agreement_high": interval.high,
            "interval_method": interval.method, "macro_precision": agreement["macro_precision"],
            "macro_recall": agreement["macro_recall"], "macro_f1": agreement["macro_f1"], "n": agreement["n"],
            "unparseable": pairwise["n_unparseable"], "swap_consistency": swap["consistency"],
            "bias_first": swap["bias_first"], "bias_second": swap["bias_second"],
            "pairs_both_orders": swap["n_pairs_both_orders"],
            "by_dataset": {k: {"n": len(v), "agreement": sum(v) / len(v)} for k, v in sorted(per_dataset.items())}}


def paired(a: Path, b: Path) -> dict[str, Any]:
    """B - A on the examples both judged (the first ones of the held-out order): the difference in
    agreement with its interval (clustered by item) and McNemar's exact p-value."""
    ra, rb = outcomes(a), outcomes(b)
    ra, rb = ra[:len(rb)], rb[:len(ra)]
    assert [r["id"] for r in ra] == [r["id"] for r in rb]
    result = compare_paired([int(r["verdict"] == r["label"]) for r in ra], [int(r["verdict"] == r["label"]) for r in rb],
                            [r["id"] for r in ra])
    diff = result.accuracy_difference
    return {"n": len(ra), "difference": diff.estimate, "low": diff.low, "high": diff.high, "method": diff.method,
            "mcnemar_p": result.mcnemar.p_value}


def line(name: str, m: dict[str, Any]) -> str:
    return (f"{name:<14} agreement {m['agreement']:.3f} [{m['agreement_low']:.3f}, {m['agreement_high']:.3f}]  "
            f"F1 {m['macro_f1']:.3f}  unparseable {m['unparseable']}/{m['n']}  swap-consistent "
            f"{m['swap_consistency']:.3f}  bias first/second {m['bias_first']:.3f}/{m['bias_second']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="append", help=f"a pairwise dataset, repeatable (default {' '.join(DATA)})")
    parser.add_argument("--max-minutes", type=float, default=25.0)
    parser.add_argument("--max-steps", type=int, default=10000)
    parser.add_argument("--max-length", type=int, default=512, help="tokens per example (prompts lose the middle)")
    parser.add_argument("--grad-accum", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--pairs", type=int, help="held-out pairs judged, both orders (default all)")
    parser.add_argument("--before-pairs", type=int, help="of which the base model judges the first N (default all)")
    parser.add_argument("--judge-minutes", type=float, default=20.0,
                        help="at most this long judging with each model (stops at a pair's end)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--work", help="working folder (default: a temporary one)")
    args = parser.parse_args()
    args.data = args.data or DATA
    import torch

    torch.set_num_threads(args.threads)
    began = time.monotonic()
    load = {"start": os.getloadavg()}
    work = Path(args.work or tempfile.mkdtemp(prefix="distil_judge_"))
    data = work / "distil"
    if not (data / "train.jsonl").is_file():
        distil(DistilOptions(out=str(data), data=tuple(args.data)))
    rows = [json.loads(x) for x in (data / "validation.jsonl").read_text().splitlines() if x.strip()]
    rows = [r for r in rows if r["kind"] == "pairwise"]
    if args.pairs:
        keep = list(dict.fromkeys(r["group"] for r in rows))[: args.pairs]
        rows = [r for r in rows if r["group"] in set(keep)]
    items = heldout(rows)
    train_rows = [json.loads(x) for x in (data / "train.jsonl").read_text().splitlines() if x.strip()]
    assert not {r["group"] for r in train_rows} & {i["id"] for i in items}, "an item is on both sides"
    paths: dict[str, Path] = {}
    base = resolve_base("smollm2")
    first = len(rows) if args.before_pairs is None else 2 * args.before_pairs
    done = work / "judgments_before.jsonl"
    timing = work / "judgments_before.seconds"
    reused = done.is_file() and timing.is_file() and [(r["id"], r["order"]) for r in outcomes(done)] == [
        (i["id"], i["order"]) for i in items[:first]]
    if reused:  # the base model's greedy verdicts on these examples from an earlier run in this folder
        paths["before"], before_s = done, float(timing.read_text())
    else:
        paths["before"], before_s = judge_examples(base, rows[:first], items[:first], args.max_length, done,
                                                   args.judge_minutes)
        timing.write_text(f"{before_s:.1f}\n")
    load["after_judging_before"] = os.getloadavg()
    print(line("before", metrics(paths["before"])) + f" ({before_s:.0f} s{', reused' if reused else ''}, "
          f"load {os.getloadavg()[0]:.1f})", flush=True)
    result = finetune(FinetuneOptions(data=str(data), out=str(work / "judge"), base="smollm2", device="cpu",
                                      max_steps=args.max_steps, max_minutes=args.max_minutes,
                                      max_length=args.max_length, grad_accum=args.grad_accum,
                                      learning_rate=args.learning_rate, save_every=25))
    load["after_training"] = os.getloadavg()
    paths["after"], after_s = judge_examples(work / "judge" / "merged", rows, items, args.max_length,
                                             work / "judgments_after.jsonl", args.judge_minutes)
    load["end"] = os.getloadavg()
    judged = items[:len(outcomes(paths["after"]))]  # the baselines on exactly the examples the tuned model judged
    paths |= {"always_first": baseline(judged, always(1), work / "always_first.jsonl"),
              "always_second": baseline(judged, always(2), work / "always_second.jsonl"),
              "longer_answer": baseline(judged, longer, work / "longer_answer.jsonl")}
    figures = {name: metrics(path) for name, path in paths.items()}
    for name in ("always_first", "always_second", "longer_answer", "before", "after"):
        print(line(name, figures[name]), flush=True)
    comparisons = {"after_minus_before": paired(paths["before"], paths["after"]),
                   "after_minus_longer_answer": paired(paths["longer_answer"], paths["after"])}
    for name, c in comparisons.items():
        print(f"{name}: {c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}] McNemar p {c['mcnemar_p']:.3g}")
    replies = [r["reply"] for r in outcomes(paths["after"])]
    top = sorted(((replies.count(t), t) for t in set(replies)), reverse=True)[:5]
    train_n = len(train_rows)
    save_json({"settings": vars(args), "work": str(work), "train_examples": train_n,
               "train_items": len({r["group"] for r in train_rows}), "heldout_examples": len(rows),
               "heldout_items": len({i["id"] for i in items}), "judged_after_examples": len(judged),
               "judged_before_examples": len(outcomes(paths["before"])), "teacher": "gold labels of " + ", ".join(args.data),
               **figures, "comparisons": comparisons, "after_top_replies": top,
               "judge_before_s": before_s, "before_reused": reused, "judge_after_s": after_s,
               "finetune": {"steps": result.steps, "stopped": result.stopped, "first_loss": result.first_loss,
                            "last_loss": result.last_loss, "train_s": result.train_s,
                            "examples_seen": result.steps * args.grad_accum, "epochs": result.steps * args.grad_accum / train_n,
                            "losses": result.losses},
               "wall_s": time.monotonic() - began, "peak_rss_gb": peak_rss_gb(), "load_average": load,
               "torch_threads": args.threads, "cpus": os.cpu_count()},
              ROOT / "experiments" / "results" / "distil_judge.json")
    print_result({"agreement_before": f"{figures['before']['agreement']:.3f}",
                  "agreement_after": f"{figures['after']['agreement']:.3f}",
                  "train_s": f"{result.train_s:.0f}", "peak_rss_gb": f"{peak_rss_gb():.2f}"})


if __name__ == "__main__":
    main()
