"""Ref-Eval vs the Top baseline on the same ~2,000 knowledge units, simulated backend, one run.

The corpus is PubMedQA abstracts (examiner data pull pubmedqa; as many as give >= --units sentence units).
Both modes use the same simulated examiner / candidate / judge and the same price table (GPT-4-turbo
list prices by default, the paper's judge). Figures per unit follow the paper's layout: #questions,
evaluation API calls per unit (examiner + judge; the candidate's calls are shown beside), input +
output tokens per unit, cents per unit, and the ratios Ref-Eval / Top. The judge self-check's calls
(ledger stage self_check) are left out of these figures and shown on a line of their own.

    python experiments/bench_exam.py [--units 2000] [--cluster-size 8] [--targets-per-question 7]

The simulated examiner's `targets_per_question` is how many units beside the centre one question
covers (docs/METHODS.md: as many as can sensibly be asked together); it is printed with the results.

Both modes are judged by the same prompt (prompts/exam_judge.md), so the simulated judge writes reasons
of the length that prompt asks for in both (it reads the policy from the call's hints): the dollar ratio
compares the methods, not two judge behaviours. Also printed: how often Ref-Eval's verdict equals the Top
baseline's on units both covered (the method's claim: Top's verdicts at a fraction of its cost), and the
evaluation cents at the endpoint's batch price. A stage `self_check` (a re-judging check of the judge, not
part of either method) is left out of the method figures and shown on its own when present.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from finish import RESULTS, print_result, save_json

from examiner.core.config import EndpointSpec, Settings
from examiner.corpus.benchmarks import load_pubmedqa
from examiner.core.labels import COVERING
from examiner.core.records import QuestionRecord, UnitOutcome
from examiner.core.records import SELF_CHECK_STAGE
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.run_writer import RunStore
from examiner.corpus.units import sentence_units
from examiner.corpus.reading import corpus_from_texts
from examiner.llm.ledger import answered

BATCH_PRICE_FACTOR = 0.5
"""Price of a batch call relative to a standard one (OpenAI's Batch API: half), used when the endpoint's
settings name no `batch_price_factor` of their own."""
NOT_METHOD_STAGES = frozenset({SELF_CHECK_STAGE})
"""Ledger stages that check the judge rather than run either method: reported apart, never in the ratios."""


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
                 "targets_per_question": args.targets_per_question},
    )
    exam = {"cluster_size": args.cluster_size, "max_probes": args.max_probes, "max_targeted": args.max_targeted,
            "max_rounds": args.max_rounds}
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ("examiner", "candidate", "judge")}, exam=exam)


def batch_factor(spec: EndpointSpec) -> float:
    """The endpoint's batch price factor (its setting where it has one, else BATCH_PRICE_FACTOR)."""
    return float(getattr(spec, "batch_price_factor", None) or BATCH_PRICE_FACTOR)


def figures(run_dir: Path, seconds: float) -> dict[str, float]:
    store = RunStore(run_dir)
    units = len(store.all(UnitOutcome)) or 1
    outcomes = store.all(UnitOutcome).values()
    paid = [r for r in answered(store.run.ledger_records()) if not r.cache_hit]
    # The judge self-check (stage self_check) audits the judge, not the method: it is left out of the
    # method comparison and shown on a line of its own.
    checks = [r for r in paid if r.stage in NOT_METHOD_STAGES]
    ledger = [r for r in paid if r.stage not in NOT_METHOD_STAGES]
    evaluation = [r for r in ledger if r.role in ("examiner", "judge")]
    candidate = [r for r in ledger if r.role == "candidate"]
    covered = [o for o in outcomes if o.status in COVERING]
    prompt_tokens = sum(r.prompt_tokens for r in evaluation)
    return {
        "units": units,
        "questions": len([q for q in store.all(QuestionRecord).values() if q.status == "ok"]),
        "eval_calls_per_unit": len(evaluation) / units,
        "examiner_calls_per_unit": sum(r.role == "examiner" for r in ledger) / units,
        "judge_calls_per_unit": sum(r.role == "judge" for r in ledger) / units,
        "candidate_calls_per_unit": len(candidate) / units,
        "eval_input_tokens_per_unit": prompt_tokens / units,
        "eval_output_tokens_per_unit": sum(r.completion_tokens for r in evaluation) / units,
        "examiner_tokens_per_unit": sum(r.prompt_tokens + r.completion_tokens for r in evaluation
                                        if r.role == "examiner") / units,
        "judge_tokens_per_unit": sum(r.prompt_tokens + r.completion_tokens for r in evaluation
                                     if r.role == "judge") / units,
        "eval_cents_per_unit": 100 * sum(r.cost_usd for r in evaluation) / units,
        "all_cents_per_unit": 100 * sum(r.cost_usd for r in ledger) / units,
        "cached_input_share": (sum(r.cached_tokens for r in evaluation) / prompt_tokens
                               if prompt_tokens else 0.0),
        "self_check_cents_per_unit": 100 * sum(r.cost_usd for r in checks) / units,
        "coverage": len(covered) / units,
        "accuracy": (sum(o.status == "correct" for o in covered) / len(covered)) if covered else float("nan"),
        "wall_s": seconds,
    }


def agreement(ref_dir: Path, top_dir: Path) -> tuple[float, int]:
    """Share of units covered by both runs on which both gave the same verdict, and how many those are."""
    ref = {o.unit_id: o.status for o in RunStore(ref_dir).all(UnitOutcome).values() if o.status in COVERING}
    top = {o.unit_id: o.status for o in RunStore(top_dir).all(UnitOutcome).values() if o.status in COVERING}
    both = ref.keys() & top.keys()
    return (sum(ref[u] == top[u] for u in both) / len(both) if both else float("nan")), len(both)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=2000)
    parser.add_argument("--cluster-size", type=int, default=8)
    parser.add_argument("--targets-per-question", type=int, default=7)
    parser.add_argument("--max-probes", type=int, default=0)
    parser.add_argument("--max-targeted", type=int, default=2)
    parser.add_argument("--max-rounds", type=int, default=8)
    parser.add_argument("--price-in", type=float, default=10.0, help="$ per 1M input tokens (GPT-4-turbo)")
    parser.add_argument("--price-out", type=float, default=30.0, help="$ per 1M output tokens (GPT-4-turbo)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the corpus and both run directories here (kept; e.g. for `examiner cost`)")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-exam-") as temporary:
        scratch = args.keep or Path(temporary)
        corpus = scratch / "corpus"
        corpus.mkdir(parents=True)
        abstracts = build_corpus(corpus, args.units)
        for mode in ("refeval", "top"):
            run_dir = scratch / mode
            began = time.perf_counter()
            await start_exam(settings(args), ExamRequest([str(corpus)], mode=mode, run_id=mode), run_dir,
                             quiet=True, report=False)
            results[mode] = figures(run_dir, time.perf_counter() - began)
        same, both = agreement(scratch / "refeval", scratch / "top")
    ref, top = results["refeval"], results["top"]
    rows = [
        ("units", "units", "{:.0f}"), ("questions", "questions", "{:.0f}"),
        ("evaluation API calls / unit", "eval_calls_per_unit", "{:.3f}"),
        ("  examiner calls / unit", "examiner_calls_per_unit", "{:.3f}"),
        ("  judge calls / unit", "judge_calls_per_unit", "{:.3f}"),
        ("candidate calls / unit (beside)", "candidate_calls_per_unit", "{:.3f}"),
        ("input tokens / unit (evaluation)", "eval_input_tokens_per_unit", "{:.0f}"),
        ("output tokens / unit (evaluation)", "eval_output_tokens_per_unit", "{:.0f}"),
        ("  examiner tokens / unit", "examiner_tokens_per_unit", "{:.0f}"),
        ("  judge tokens / unit", "judge_tokens_per_unit", "{:.0f}"),
        ("cents / unit (evaluation)", "eval_cents_per_unit", "{:.3f}"),
        ("cents / unit (with candidate)", "all_cents_per_unit", "{:.3f}"),
        ("cents / unit (judge self-check, apart)", "self_check_cents_per_unit", "{:.3f}"),
        ("cached share of input (evaluation)", "cached_input_share", "{:.3f}"),
        ("coverage", "coverage", "{:.3f}"), ("accuracy (covered)", "accuracy", "{:.3f}"),
        ("wall time (s)", "wall_s", "{:.1f}"),
    ]
    factor = batch_factor(settings(args).endpoints["sim"])
    print(f"\n{abstracts} PubMedQA abstracts; cluster size {args.cluster_size}, simulated examiner covers up to "
          f"{args.targets_per_question + 1} units per question, probes {args.max_probes}, unit leaves the pool after "
          f"{args.max_targeted} uncovered targetings; both judges follow the reason policy of "
          f"prompts/exam_judge.md; prices ${args.price_in}/${args.price_out} per 1M tokens\n")
    print(f"{'figure':<36}{'Ref-Eval':>12}{'Top':>12}{'ratio':>10}")
    for label, key, fmt in rows:
        ratio = ref[key] / top[key] if top[key] else float("nan")
        print(f"{label:<36}{fmt.format(ref[key]):>12}{fmt.format(top[key]):>12}{ratio:>10.3f}")
    if ref["self_check_cents_per_unit"] or top["self_check_cents_per_unit"]:
        print(f"{'judge self-check cents / unit (apart)':<36}{ref['self_check_cents_per_unit']:>12.3f}"
              f"{top['self_check_cents_per_unit']:>12.3f}")
    dollar_ratio = ref["eval_cents_per_unit"] / top["eval_cents_per_unit"]
    batch_cents = ref["eval_cents_per_unit"] * factor
    print(f"\nRef-Eval evaluation cents / unit at the batch price (standard x {factor:g}): {batch_cents:.3f}")
    print(f"Ref-Eval vs Top: same verdict on {same:.3f} of the {both} units both covered")
    print("\npaper (GPT-4-turbo): Ref-Eval 1.3 calls, 431+54 tokens, 0.59 cents per KU; LLM(ref) 2.0 calls, "
          "524+272 tokens, 1.34 cents: ratio 0.44")
    print(f"targets: Ref-Eval <= 0.30 evaluation cents per unit -> {ref['eval_cents_per_unit']:.3f} "
          f"(batch <= 0.15 -> {batch_cents:.3f}); Ref-Eval/Top dollar ratio <= 0.35 -> {dollar_ratio:.3f}; "
          f"agreement on units both covered >= 0.95 -> {same:.3f}")
    save_json({"settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
               "abstracts": abstracts, "batch_price_factor": factor,
               "agreement": {"same_verdict": same, "units_both_covered": both}, **results},
              RESULTS / "bench_exam.json")
    print_result({"units": f"{ref['units']:.0f}",
                  "ref_cents_per_unit": f"{ref['eval_cents_per_unit']:.3f}",
                  "ref_cents_per_unit_batch": f"{batch_cents:.3f}",
                  "top_cents_per_unit": f"{top['eval_cents_per_unit']:.3f}", "dollar_ratio": f"{dollar_ratio:.3f}",
                  "ref_top_agreement": f"{same:.3f}",
                  "ref_accuracy": f"{ref['accuracy']:.3f}", "ref_coverage": f"{ref['coverage']:.3f}",
                  "top_accuracy": f"{top['accuracy']:.3f}", "top_coverage": f"{top['coverage']:.3f}",
                  "refeval_eval_calls_per_unit": f"{ref['eval_calls_per_unit']:.3f}",
                  "top_eval_calls_per_unit": f"{top['eval_calls_per_unit']:.3f}",
                  "ref_cached_input_share": f"{ref['cached_input_share']:.3f}",
                  "refeval_wall_s": f"{ref['wall_s']:.1f}", "top_wall_s": f"{top['wall_s']:.1f}"})


if __name__ == "__main__":
    asyncio.run(main())
