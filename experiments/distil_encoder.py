"""The encoder student (issue 44): a MiniLM cross-encoder judge distilled on CPU from GPT-4's released LLMBar
judgments, against the human labels, the teacher and simple rules, then as a cascade's cheap tier.

Data: $EXAMINER_DATA/llmbar/gpt-4-judgments (GPT-4's verdicts on the eight LLMBar sets, 885 pairs, each in
both answer orders, with the human label; see SOURCE.md there), read at run time only. The split is by item
(examiner.judging.distil.split_of, seed 0, `--heldout-share` held out); nothing of the held-out items is used
in training, early stopping or the temperature. The teacher's target for an item is the share of its two
verdicts (both orders; upstream gives both in the original labelling) that prefer answer 1.

Held-out figures (both orders of each item; the student is order-free, so its two verdicts agree):
agreement with the human labels and with GPT-4's verdict in that order, each with a 95 % interval clustered
by item (examiner.stats.accuracy_interval); the same for always first, always second and the longer answer
(by characters; equal lengths count as wrong); the paired difference student - longer with McNemar's exact
p (examiner.stats.compare_paired). The SmolLM2 LoRA student's figure is quoted from docs/DISTIL.md (it was
measured on another held-out split of the human-labelled sets).

Cascade: the held-out items; a calibration sample drawn by examiner.judging.cascade.in_calibration
(`--calibration-share`); GPT-4's original-order verdict is the strong judge's; the threshold by
examiner.stats.cascade.calibrate_threshold at a promised agreement of 0.90, risk 0.1. Reported: the share
of held-out items the student settles, its agreement with GPT-4 on them, and spend against strong-only
(GPT-4-turbo list prices, $10 / $30 per million input / output tokens, both orders per item as
`examiner judge --swap`, tokens estimated as characters / 4 of examiner's pairwise prompt and of GPT-4's
released completions; the student at its measured CPU seconds times `--cpu-price` dollars per core-hour).
The guarantee is also checked over `--repeats` random calibration draws of the same student outputs.

Student: `--mode frozen` (default) a head on the frozen encoder's features; `--mode cross` the fine-tuned
cross-encoder (examiner/judging/encoder_finetune.py, settings CrossSettings' defaults). A rerun with the same
--work resumes either training (the cross mode from its checkpoint; train_s then counts this run only).

Run: python experiments/distil_encoder.py [--mode frozen|cross] [--max-minutes 30] [--threads 1] [--work DIR]
Writes experiments/results/distil_encoder.json (cross: distil_encoder_cross.json; aggregates only) and ends
with the RESULT line.
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

import numpy as np  # noqa: E402
from finish import print_result, save_json  # noqa: E402

from examiner.agents.judge.pairwise_judge import pairwise_messages  # noqa: E402
from examiner.judging.cascade import in_calibration  # noqa: E402
from examiner.judging.distil import split_of  # noqa: E402
from examiner.judging.encoder_distil import TaughtPair, train_encoder_judge  # noqa: E402
from examiner.judging.encoder_finetune import finetune_encoder_judge  # noqa: E402
from examiner.llm.encoder_judge import EncoderJudge  # noqa: E402
from examiner.stats.cascade import calibrate_threshold  # noqa: E402
from examiner.stats.intervals import accuracy_interval  # noqa: E402
from examiner.stats.paired import compare_paired  # noqa: E402

SMOLLM2_AGREEMENT = 0.500
"""The LoRA-tuned SmolLM2-135M's agreement with the human labels (docs/DISTIL.md, 240 held-out examples)."""
PRICE_IN, PRICE_OUT = 10.0, 30.0
"""GPT-4-turbo list prices, dollars per million input / output tokens."""


def load_items(folder: Path) -> list[dict[str, Any]]:
    """One item per pair: texts, the human label and GPT-4's verdict in each order (original labelling)."""
    items = []
    for path in sorted(folder.glob("*.json")):
        name = path.name.split(".")[0]
        for index, row in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            result = row["results"][0]
            # both winners are already in the original labelling (upstream maps the swapped run back: the two
            # orders agree on 643 of 885 items read so, on 78 read as "shown order"); "None": no verdict (0)
            winner = {order: str(result[f"swap = {flag}"]["winner"]) for order, flag in (("original", False), ("swapped", True))}
            gpt4 = {order: int(w) if w in ("1", "2") else 0 for order, w in winner.items()}
            completion = sum(len(str((result[f"swap = {flag}"].get("completion") or [""])[0])) for flag in (False, True))
            items.append({"id": f"{name}:{index}", "set": name, "instruction": row["input"], "output_1": row["output_1"],
                          "output_2": row["output_2"], "human": int(row["label"]), "gpt4": gpt4,
                          "completion_chars": completion})
    return items


def interval(correct: list[int], ids: list[str]) -> dict[str, float]:
    ci = accuracy_interval(correct, ids)
    return {"agreement": float(np.mean(correct)), "low": ci.low, "high": ci.high}


def rule_verdicts(item: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Each baseline's verdict per order, in the original labelling (0 = no verdict)."""
    a, b = len(item["output_1"]), len(item["output_2"])
    longer = 0 if a == b else (1 if a > b else 2)
    return {"always_first": {"original": 1, "swapped": 2}, "always_second": {"original": 2, "swapped": 1},
            "longer_answer": {"original": longer, "swapped": longer}}


def strong_dollars(item: dict[str, Any]) -> float:
    """GPT-4-turbo's price of judging one item in both orders (characters / 4 per token)."""
    prompt = sum(len(m["content"]) for m in pairwise_messages(item["instruction"], item["output_1"], item["output_2"], None))
    return (2 * prompt / 4 * PRICE_IN + item["completion_chars"] / 4 * PRICE_OUT) / 1e6


def cascade(held: list[dict[str, Any]], p_first: np.ndarray, seed: int, share: float) -> dict[str, Any]:
    """The student as cheap tier on the held-out items, one calibration draw (`seed`)."""
    verdict = np.where(p_first >= 0.5, 1, 2)
    confidence = np.maximum(p_first, 1 - p_first)
    strong = np.array([item["gpt4"]["original"] for item in held])
    cal = np.array([in_calibration(item["id"], share, seed) for item in held])
    threshold = calibrate_threshold(confidence[cal], verdict[cal] == strong[cal], target_agreement=0.9, risk=0.1)
    settled = ~cal & (confidence >= threshold.threshold)
    agreement = float(np.mean(verdict[settled] == strong[settled])) if settled.any() else None
    return {"threshold": threshold.threshold if threshold.keeps_any else None, "calibration": int(cal.sum()),
            "settled": int(settled.sum()), "settled_share": float(settled.mean()), "agreement": agreement,
            "held": agreement is None or agreement >= 0.9, "settled_mask": settled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-minutes", type=float, default=30.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--base", default="minilm", help="the encoder (tiny: a random one, to check the script)")
    parser.add_argument("--mode", choices=("frozen", "cross"), default="frozen",
                        help="frozen encoder + head, or the fine-tuned cross-encoder (--encoder-mode cross)")
    parser.add_argument("--heldout-share", type=float, default=0.3)
    parser.add_argument("--calibration-share", type=float, default=0.3, help="of the held-out items (cascade)")
    parser.add_argument("--repeats", type=int, default=200, help="calibration draws for the guarantee check")
    parser.add_argument("--cpu-price", type=float, default=0.05, help="dollars per CPU core-hour for the student")
    parser.add_argument("--work", help="working folder (default: a temporary one); a rerun resumes the training")
    args = parser.parse_args()
    from examiner.corpus.public_sets import configured_root

    folder = configured_root() / "llmbar" / "gpt-4-judgments"
    if not folder.is_dir():
        print(f"skipped: GPT-4's LLMBar judgments are not at {folder} (set EXAMINER_DATA)")
        return
    load = {"start": os.getloadavg()}
    items = load_items(folder)
    held = [i for i in items if split_of(i["id"], args.heldout_share, 0) == "validation"]
    train = [i for i in items if split_of(i["id"], args.heldout_share, 0) == "train"]
    work = Path(args.work or tempfile.mkdtemp(prefix="distil_encoder_"))
    pairs = [TaughtPair(i["id"], i["instruction"], i["output_1"], i["output_2"],
                        sum(v == 1 for v in i["gpt4"].values()) / sum(v > 0 for v in i["gpt4"].values()))
             for i in train if any(v > 0 for v in i["gpt4"].values())]
    began = time.monotonic()
    trainer = finetune_encoder_judge if args.mode == "cross" else train_encoder_judge
    training = trainer(pairs, work / "encoder", base=args.base, max_minutes=args.max_minutes, threads=args.threads,
                     progress=lambda line: print(line, flush=True))
    train_s = time.monotonic() - began
    load["after_training"] = os.getloadavg()
    if training.temperature is None:
        print(f"training stopped at the bound with {training.encoded}/{training.to_encode} texts: rerun with --work {work}")
        return
    judge = EncoderJudge(work / "encoder", threads=args.threads)
    began, cpu = time.monotonic(), time.process_time()
    verdicts = judge.judge([(i["instruction"], i["output_1"], i["output_2"]) for i in held])
    judge_s, judge_cpu = time.monotonic() - began, time.process_time() - cpu
    load["after_judging"] = os.getloadavg()
    p_first = np.array([v.p_first for v in verdicts])
    student = np.where(p_first >= 0.5, 1, 2)
    swapped_check = judge.judge([(i["instruction"], i["output_2"], i["output_1"]) for i in held[:20]])
    symmetric = all(abs(a.p_first - (1 - b.p_first)) < 1e-4 for a, b in zip(verdicts, swapped_check))

    ids, records = [], []
    for item, s in zip(held, student):
        for order in ("original", "swapped"):
            ids.append(item["id"])
            records.append({"student": int(s), "human": item["human"], "gpt4": item["gpt4"][order],
                            **{k: v[order] for k, v in rule_verdicts(item).items()}})
    figures: dict[str, Any] = {}
    for judge_name in ("student", "always_first", "always_second", "longer_answer", "gpt4"):
        figures[judge_name] = {"human": interval([int(r[judge_name] == r["human"]) for r in records], ids)}
        if judge_name != "gpt4":
            figures[judge_name]["teacher"] = interval([int(r[judge_name] == r["gpt4"]) for r in records], ids)
    paired = compare_paired([int(r["longer_answer"] == r["human"]) for r in records],
                            [int(r["student"] == r["human"]) for r in records], ids)
    diff = paired.accuracy_difference
    # against chance: always-first is right on exactly one of each item's two orders
    versus_first = compare_paired([int(r["always_first"] == r["human"]) for r in records],
                                  [int(r["student"] == r["human"]) for r in records], ids)
    by_set: dict[str, list[int]] = {}
    for item, s in zip(held, student):
        by_set.setdefault(item["set"], []).append(int(s == item["human"]))

    main_case = cascade(held, p_first, 0, args.calibration_share)
    draws = [cascade(held, p_first, seed, args.calibration_share) for seed in range(args.repeats)]
    strong_each = np.array([strong_dollars(i) for i in held])
    cheap_each = judge_cpu / len(held) / 3600 * args.cpu_price
    escalated = ~main_case["settled_mask"]
    spend_ratio = (cheap_each * len(held) + strong_each[escalated].sum()) / strong_each.sum()
    main_case.pop("settled_mask")
    for draw in draws:
        draw.pop("settled_mask")

    for name in ("always_first", "always_second", "longer_answer", "student"):
        h, t = figures[name]["human"], figures[name]["teacher"]
        print(f"{name:<14} human {h['agreement']:.3f} [{h['low']:.3f}, {h['high']:.3f}]  "
              f"gpt-4 {t['agreement']:.3f} [{t['low']:.3f}, {t['high']:.3f}]")
    g = figures["gpt4"]["human"]
    print(f"{'gpt-4 itself':<14} human {g['agreement']:.3f} [{g['low']:.3f}, {g['high']:.3f}]")
    print(f"student - longer: {diff.estimate:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}] McNemar p {paired.mcnemar.p_value:.3g}")
    chance = versus_first.accuracy_difference
    print(f"student - always first: {chance.estimate:+.3f} [{chance.low:+.3f}, {chance.high:+.3f}] "
          f"McNemar p {versus_first.mcnemar.p_value:.3g}")
    print(f"judging: {len(held) / judge_s:.1f} pairs/s wall, {len(held) / judge_cpu:.1f} pairs per CPU second "
          f"({args.threads} torch thread(s), load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"cascade: settles {main_case['settled_share']:.3f} of {len(held)} items, agreement with GPT-4 on them "
          f"{main_case['agreement']}, spend {spend_ratio:.3f} of strong-only; guarantee held in "
          f"{np.mean([d['held'] for d in draws]):.3f} of {len(draws)} calibration draws")
    save_json({"settings": vars(args), "items": len(items), "train_items": len(train), "heldout_items": len(held),
               "heldout_examples": len(records), "training": {k: v for k, v in vars(training).items() if k != "folder"},
               "train_s": train_s, "judge_s": judge_s, "judge_cpu_s": judge_cpu, "pairs_per_s": len(held) / judge_s,
               "pairs_per_cpu_s": len(held) / judge_cpu,
               "order_free": symmetric, **figures, "smollm2_lora_human_quoted": SMOLLM2_AGREEMENT,
               "student_minus_longer": {"difference": diff.estimate, "low": diff.low, "high": diff.high,
                                        "mcnemar_p": paired.mcnemar.p_value},
               "student_minus_always_first": {"difference": chance.estimate, "low": chance.low, "high": chance.high,
                                              "mcnemar_p": versus_first.mcnemar.p_value},
               "student_by_set": {k: {"n": len(v), "agreement": float(np.mean(v))} for k, v in sorted(by_set.items())},
               "cascade": main_case, "cascade_draws": {"repeats": len(draws),
                                                       "held_share": float(np.mean([d["held"] for d in draws])),
                                                       "mean_settled_share": float(np.mean([d["settled_share"] for d in draws]))},
               "spend": {"strong_only_dollars": float(strong_each.sum()), "student_dollars": cheap_each * len(held),
                         "ratio": spend_ratio},
               "load_average": load, "cpus": os.cpu_count(), "torch_threads": args.threads},
              ROOT / "experiments" / "results" / ("distil_encoder.json" if args.mode == "frozen" else "distil_encoder_cross.json"))
    print_result({"student_agreement_human": f"{figures['student']['human']['agreement']:.3f}",
                  "longer_rule_agreement": f"{figures['longer_answer']['human']['agreement']:.3f}",
                  "mcnemar_p": f"{paired.mcnemar.p_value:.3g}",
                  "student_agreement_teacher": f"{figures['student']['teacher']['agreement']:.3f}",
                  "train_s": f"{train_s:.0f}", "pairs_per_s": f"{len(held) / judge_s:.1f}",
                  "cascade_settled_share": f"{main_case['settled_share']:.3f}",
                  "cascade_agreement": f"{main_case['agreement']:.3f}" if main_case["agreement"] is not None else "none",
                  "cascade_spend_ratio": f"{spend_ratio:.3f}"})


if __name__ == "__main__":
    main()
