"""A judge cascade inside a real exam run, checked out of sample (issue 30, item 4): how does the cheap
judge's realised agreement on the units it kept compare with the promised rate, and what does each way of
reading its confidence cost? One run gives one realised share per case; the promise is about the rate
(risk-controlled over calibration draws), which experiments/judge_cascade.py scores over many draws.

experiments/judge_cascade.py checks the statistics on simulated verdicts; this runs `examiner run` itself,
end to end on the simulator, on a corpus of PubMedQA abstracts, one round:
1. the strong judge alone (the reference; noise-free, so its verdict on a unit does not depend on which
   other units share its call);
2. the cascade, cheap judge 85 % raw agreement with per-unit difficulty, target 0.9, risk 0.1, a quarter
   of the answers calibrated, its confidence read (a) from label log-probabilities (calibrated), (b) from
   log-probabilities of an overconfident judge (95-100 % whatever it says), (c) from 5 samples.
The examiner and candidate are seeded alike, so every run asks the same questions and gets the same
answers, and a verdict's id (answer, unit) is the same in every run: each verdict the cheap judge kept is
compared with the strong-only run's verdict of the same id (out of sample, unlike the report's in-sample
figure). Spend is the judging spend (cheap + strong tiers) over the
strong-only run's judging spend, from the ledgers.

    python experiments/cascade_exam.py [--documents 80] [--seed 0]

Ends with `RESULT logprobs_cheap_share=.. logprobs_kept_agreement=.. logprobs_spend_ratio=..
samples_cheap_share=.. samples_kept_agreement=.. samples_spend_ratio=.. overconfident_cheap_share=..
overconfident_kept_agreement=..` (figures in experiments/results/cascade_exam.json).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from finish import RESULTS, print_result, save_json

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examiner.cli.main import main  # noqa: E402
from examiner.corpus.benchmarks import load_pubmedqa  # noqa: E402
from examiner.llm.ledger import answered, read_ledger  # noqa: E402

CHEAP = {"provider": "simulated", "model": "sim-cheap", "price_input_per_1m": 0.15, "price_output_per_1m": 0.6}
STRONG = {"provider": "simulated", "model": "sim-strong", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0}
CHEAP_NOISE = {"judge_noise": 0.15, "judge_difficulty": 2}
CASES: dict[str, tuple[dict[str, Any], str]] = {
    "logprobs": ({}, "logprobs"),
    "overconfident": ({"judge_confidence": "overconfident"}, "logprobs"),
    "samples": ({}, "samples"),
}
"""Case -> (extra options of the cheap endpoint, how its confidence is read)."""
JUDGING_STAGES = ("judge", "judge_cascade")


def write_corpus(folder: Path, documents: int) -> Path:
    """The first `documents` PubMedQA abstracts, one Markdown file each."""
    folder.mkdir(parents=True, exist_ok=True)
    for item in load_pubmedqa()[:documents]:
        body = "\n\n".join(item.contexts)
        (folder / f"{item.pubid}.md").write_text(f"# {item.question}\n\n{body}\n", encoding="utf-8")
    return folder


def write_config(path: Path, cheap_options: dict[str, Any], confidence: str | None, seed: int) -> Path:
    judge: Any = "strong"
    if confidence is not None:
        judge = {"cascade": ["cheap", "strong"], "target_agreement": 0.9, "risk": 0.1, "calibration_share": 0.25,
                 "confidence": confidence}
    path.write_text(yaml.safe_dump({
        "endpoints": {"cheap": {**CHEAP, "options": {**CHEAP_NOISE, **cheap_options}}, "strong": STRONG},
        "roles": {"examiner": "simulated", "candidate": "simulated", "judge": judge},
        "exam": {"seed": seed}}))
    return path


def run_exam(corpus: Path, config: Path, out: Path) -> float:
    """`examiner run` for one round, quietly; its wall time."""
    began = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["run", str(corpus), "--config", str(config), "--out", str(out), "--quiet", "--max-rounds", "1"])
    if code != 0:
        raise SystemExit(f"examiner run {out} exited {code}")
    return time.monotonic() - began


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def judging_spend(out: Path) -> tuple[float, int, int]:
    """(dollars, calls, completion tokens) of the run's judging calls (the self-check left out)."""
    calls = [r for r in answered(read_ledger(out / "ledger.jsonl")) if r.stage in JUDGING_STAGES and not r.cache_hit]
    return sum(r.cost_usd for r in calls), len(calls), sum(r.completion_tokens for r in calls)


def measure(out: Path, reference: dict[str, str | None], strong_spend: float) -> dict[str, Any]:
    records = jsonl(out / "cascade.jsonl")
    verdicts = {v["id"]: v for v in jsonl(out / "verdicts.jsonl")}
    kept = [r for r in records if r["tier"] == "cheap"]
    compared = [r for r in kept if reference.get(r["id"]) is not None]
    agree = sum(verdicts[r["id"]]["verdict"] == reference[r["id"]] for r in compared)
    overall = [v for v in verdicts.values() if reference.get(v["id"]) is not None]
    dollars, calls, tokens = judging_spend(out)
    section = json.loads((out / "report.json").read_text())["cascade"]
    return {
        "units": len(records), "cheap_share": len(kept) / len(records) if records else 0.0,
        "kept_compared": len(compared), "kept_agreement": agree / len(compared) if compared else None,
        "overall_agreement": (sum(v["verdict"] == reference[v["id"]] for v in overall) / len(overall)
                              if overall else None),
        "in_sample_kept_agreement": section["kept_agreement"], "threshold": section["threshold"],
        "calibration_units": section["calibration_units"], "confidence_source": section["confidence_source"],
        "judging_usd": dollars, "judging_calls": calls, "judging_completion_tokens": tokens,
        "spend_ratio": dollars / strong_spend if strong_spend else None,
    }


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=80)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", help="working folder (default: a temporary one)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="cascade_exam_"))
    corpus = write_corpus(work / "corpus", args.documents)
    began = time.monotonic()
    strong_out = work / "strong"
    wall = {"strong": run_exam(corpus, write_config(work / "strong.yaml", {}, None, args.seed), strong_out)}
    reference = {v["id"]: v["verdict"] for v in jsonl(strong_out / "verdicts.jsonl")}
    strong_usd, strong_calls, strong_tokens = judging_spend(strong_out)
    print(f"strong judge alone: {len(reference)} verdicts, {strong_calls} calls, {strong_tokens} completion tokens, "
          f"${strong_usd:.4f}", flush=True)
    cases: dict[str, dict[str, Any]] = {}
    for name, (options, confidence) in CASES.items():
        out = work / name
        wall[name] = run_exam(corpus, write_config(work / f"{name}.yaml", options, confidence, args.seed), out)
        cases[name] = case = measure(out, reference, strong_usd)
        print(f"{name:>13}: cheap settles {fmt(case['cheap_share'])} of {case['units']} verdicts, agreement with the "
              f"strong-only run on them {fmt(case['kept_agreement'])} (n={case['kept_compared']}; in-sample "
              f"{fmt(case['in_sample_kept_agreement'])}, threshold {fmt(case['threshold'])}), overall "
              f"{fmt(case['overall_agreement'])}; judging {case['judging_calls']} calls, "
              f"{case['judging_completion_tokens']} completion tokens, spend {fmt(case['spend_ratio'])} of strong-only",
              flush=True)
    save_json({"settings": vars(args) | {"work": str(work)}, "strong": {"verdicts": len(reference), "usd": strong_usd,
               "calls": strong_calls, "completion_tokens": strong_tokens}, "cases": cases, "wall_s": wall,
               "total_s": time.monotonic() - began}, RESULTS / "cascade_exam.json")
    figures = {}
    for name in ("logprobs", "samples", "overconfident"):
        figures |= {f"{name}_cheap_share": fmt(cases[name]["cheap_share"]),
                    f"{name}_kept_agreement": fmt(cases[name]["kept_agreement"])}
        if name != "overconfident":
            figures[f"{name}_spend_ratio"] = fmt(cases[name]["spend_ratio"])
    print_result(figures)


if __name__ == "__main__":
    main_()
