"""Ref-Eval vs the Top baseline on the same ~2,000 knowledge units, simulated backend, one run.

The corpus is PubMedQA abstracts from ../shared/data (as many as give >= --units sentence units).
Both modes use the same simulated examiner / candidate / judge and the same price table (GPT-4-turbo
list prices by default, the paper's judge). Figures per unit follow the paper's layout: #questions,
evaluation API calls per unit (examiner + judge; the candidate's calls are shown beside), input +
output tokens per unit, cents per unit, and the ratios Ref-Eval / Top. The judge self-check's calls
(ledger stage self_check) are left out of these figures and shown on a line of their own.

    python experiments/bench_exam.py [--units 2000] [--cluster-size 8] [--targets-per-question 7]

The simulated examiner's `targets_per_question` is how many units beside the centre one question
covers (METHODS.md: as many as can sensibly be asked together); it is printed with the results.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from finish import RESULTS, print_result, save_json

from examiner.config import EndpointSpec, Settings
from examiner.datasets import load_pubmedqa
from examiner.core.labels import COVERING
from examiner.core.records import QuestionRecord, UnitOutcome
from examiner.core.records import SELF_CHECK_STAGE
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.store import RunStore
from examiner.knowledge import sentence_units
from examiner.corpus import corpus_from_texts
from examiner.llm.ledger import answered

BRIEF_REASONS = {"correct": 12, "unrelated": 8, "incorrect": 44}
"""Reason lengths (filler tokens) of a judge that follows prompts/exam_judge.md: one short sentence for
correct / unrelated, the full error + correct statement for incorrect. Default: ~44 for every label."""


def build_corpus(folder: Path, units_wanted: int) -> int:
    """Write PubMedQA abstracts until the sentence units reach `units_wanted`; returns abstracts used."""
    items = load_pubmedqa()
    texts: list[tuple[str, str]] = []
    for item in items:
        texts.append((f"{item.pubid}.txt", "\n\n".join(item.contexts)))
        if len(texts) % 20 == 0 and len(sentence_units(corpus_from_texts(texts))) >= units_wanted:
            break
    for name, text in texts:
        (folder / name).write_text(text, encoding="utf-8")
    return len(texts)


def settings(args: argparse.Namespace) -> Settings:
    spec = EndpointSpec(
        provider="simulated", model="sim", price_input_per_1m=args.price_in, price_output_per_1m=args.price_out,
        max_concurrency=32,
        options={"knowledge": {"known": 0.6, "wrong": 0.2, "unknown": 0.2},
                 "targets_per_question": args.targets_per_question,
                 "reason_tokens": BRIEF_REASONS if args.brief_reasons else {}},
    )
    exam = {"cluster_size": args.cluster_size, "max_probes": args.max_probes, "max_targeted": args.max_targeted,
            "max_rounds": args.max_rounds}
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ("examiner", "candidate", "judge")}, exam=exam)


def figures(run_dir: Path, seconds: float) -> dict[str, float]:
    store = RunStore(run_dir)
    units = len(store.all(UnitOutcome)) or 1
    outcomes = store.all(UnitOutcome).values()
    paid = [r for r in answered(store.run.read_ledger()) if not r.get("cache_hit")]
    # The judge self-check (stage self_check) audits the judge, not the method: it is left out of the
    # method comparison and shown on a line of its own.
    ledger = [r for r in paid if r["stage"] != SELF_CHECK_STAGE]
    evaluation = [r for r in ledger if r["role"] in ("examiner", "judge")]
    candidate = [r for r in ledger if r["role"] == "candidate"]
    covered = [o for o in outcomes if o.status in COVERING]
    return {
        "units": units,
        "questions": len([q for q in store.all(QuestionRecord).values() if q.status == "ok"]),
        "eval_calls_per_unit": len(evaluation) / units,
        "examiner_calls_per_unit": sum(r["role"] == "examiner" for r in ledger) / units,
        "judge_calls_per_unit": sum(r["role"] == "judge" for r in ledger) / units,
        "candidate_calls_per_unit": len(candidate) / units,
        "eval_input_tokens_per_unit": sum(r["prompt_tokens"] for r in evaluation) / units,
        "eval_output_tokens_per_unit": sum(r["completion_tokens"] for r in evaluation) / units,
        "eval_cents_per_unit": 100 * sum(r["cost_usd"] for r in evaluation) / units,
        "all_cents_per_unit": 100 * sum(r["cost_usd"] for r in ledger) / units,
        "self_check_cents_per_unit": 100 * sum(r["cost_usd"] for r in paid if r["stage"] == SELF_CHECK_STAGE) / units,
        "coverage": len(covered) / units,
        "accuracy": (sum(o.status == "correct" for o in covered) / len(covered)) if covered else float("nan"),
        "wall_s": seconds,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=2000)
    parser.add_argument("--cluster-size", type=int, default=8)
    parser.add_argument("--targets-per-question", type=int, default=7)
    parser.add_argument("--max-probes", type=int, default=0)
    parser.add_argument("--max-targeted", type=int, default=2)
    parser.add_argument("--max-rounds", type=int, default=8)
    parser.add_argument("--brief-reasons", action="store_true",
                        help="simulated judge follows the prompt's short reasons for correct/unrelated units")
    parser.add_argument("--price-in", type=float, default=10.0, help="$ per 1M input tokens (GPT-4-turbo)")
    parser.add_argument("--price-out", type=float, default=30.0, help="$ per 1M output tokens (GPT-4-turbo)")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-exam-") as scratch:
        corpus = Path(scratch) / "corpus"
        corpus.mkdir()
        abstracts = build_corpus(corpus, args.units)
        for mode in ("refeval", "top"):
            run_dir = Path(scratch) / mode
            began = time.perf_counter()
            await start_exam(settings(args), ExamRequest([str(corpus)], mode=mode, run_id=mode), run_dir,
                             quiet=True, report=False)
            results[mode] = figures(run_dir, time.perf_counter() - began)
    ref, top = results["refeval"], results["top"]
    rows = [
        ("units", "units", "{:.0f}"), ("questions", "questions", "{:.0f}"),
        ("evaluation API calls / unit", "eval_calls_per_unit", "{:.3f}"),
        ("  examiner calls / unit", "examiner_calls_per_unit", "{:.3f}"),
        ("  judge calls / unit", "judge_calls_per_unit", "{:.3f}"),
        ("candidate calls / unit (beside)", "candidate_calls_per_unit", "{:.3f}"),
        ("input tokens / unit (evaluation)", "eval_input_tokens_per_unit", "{:.0f}"),
        ("output tokens / unit (evaluation)", "eval_output_tokens_per_unit", "{:.0f}"),
        ("cents / unit (evaluation)", "eval_cents_per_unit", "{:.3f}"),
        ("cents / unit (with candidate)", "all_cents_per_unit", "{:.3f}"),
        ("cents / unit (judge self-check, apart)", "self_check_cents_per_unit", "{:.3f}"),
        ("coverage", "coverage", "{:.3f}"), ("accuracy (covered)", "accuracy", "{:.3f}"),
        ("wall time (s)", "wall_s", "{:.1f}"),
    ]
    print(f"\n{abstracts} PubMedQA abstracts; cluster size {args.cluster_size}, simulated examiner covers up to "
          f"{args.targets_per_question + 1} units per question, probes {args.max_probes}, unit leaves the pool after "
          f"{args.max_targeted} uncovered targetings; judge reasons {'brief' if args.brief_reasons else '~60 tokens'} "
          f"for correct/unrelated; prices ${args.price_in}/${args.price_out} per 1M tokens\n")
    print(f"{'figure':<36}{'Ref-Eval':>12}{'Top':>12}{'ratio':>10}")
    for label, key, fmt in rows:
        ratio = ref[key] / top[key] if top[key] else float("nan")
        print(f"{label:<36}{fmt.format(ref[key]):>12}{fmt.format(top[key]):>12}{ratio:>10.3f}")
    dollar_ratio = ref["eval_cents_per_unit"] / top["eval_cents_per_unit"]
    print("\npaper (GPT-4-turbo): Ref-Eval 1.3 calls, 431+54 tokens, 0.59 cents per KU; LLM(ref) 2.0 calls, "
          "524+272 tokens, 1.34 cents: ratio 0.44")
    print(f"targets: Ref-Eval <= 0.6 evaluation calls per unit -> {ref['eval_calls_per_unit']:.3f}; "
          f"Ref-Eval/Top dollar ratio <= 0.44 -> {dollar_ratio:.3f}")
    save_json({"settings": vars(args), "abstracts": abstracts, **results}, RESULTS / "bench_exam.json")
    print_result({"brief_reasons": int(args.brief_reasons), "units": f"{ref['units']:.0f}",
                  "refeval_eval_calls_per_unit": f"{ref['eval_calls_per_unit']:.3f}",
                  "top_eval_calls_per_unit": f"{top['eval_calls_per_unit']:.3f}", "dollar_ratio": f"{dollar_ratio:.3f}",
                  "refeval_cents_per_unit": f"{ref['eval_cents_per_unit']:.3f}",
                  "top_cents_per_unit": f"{top['eval_cents_per_unit']:.3f}",
                  "refeval_wall_s": f"{ref['wall_s']:.1f}", "top_wall_s": f"{top['wall_s']:.1f}"})


if __name__ == "__main__":
    asyncio.run(main())
