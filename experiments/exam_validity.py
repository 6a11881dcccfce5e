"""Simulated-candidate validity: does the exam recover a known knowledge profile?

The simulated candidate knows 60% of the units, gets 20% wrong and does not know 20% (seeded per unit),
so the true accuracy over answerable units is known. The exam (simulated examiner and judge, at most 5
rounds) should report an accuracy within 0.03 of it and cover >= 95% of the answerable units.

    python experiments/exam_validity.py [--abstracts 28] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from finish import RESULTS, print_result, save_json

from examiner.core.config import EndpointSpec, Settings
from examiner.corpus.benchmarks import load_pubmedqa
from examiner.core.labels import COVERING
from examiner.core.records import UnitOutcome
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.run_writer import RunStore
from examiner.simulator import unit_category

PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}


async def one_run(corpus: Path, seed: int, run_dir: Path) -> dict[str, float]:
    spec = EndpointSpec(provider="simulated", model="sim", max_concurrency=16,
                        options={"knowledge": PROFILE, "seed": seed})
    settings = Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ("examiner", "candidate", "judge")},
                        exam={"max_rounds": 5})
    info = await start_exam(settings, ExamRequest([str(corpus)], targets=["sim"]), run_dir, quiet=True, report=False)
    outcomes = list(RunStore(run_dir).all(UnitOutcome).values())
    category = {o.unit_id: unit_category(seed, "sim", o.unit_id, PROFILE) for o in outcomes}
    answerable = [o for o in outcomes if category[o.unit_id] != "unknown"]
    covered = [o for o in outcomes if o.status in COVERING]
    true_accuracy = sum(category[o.unit_id] == "known" for o in answerable) / len(answerable)
    reported = sum(o.status == "correct" for o in covered) / len(covered)
    return {
        "seed": seed, "units": len(outcomes), "rounds": len({r.round for r in info.rounds}),
        "true_accuracy": true_accuracy, "reported_accuracy": reported,
        "abs_error": abs(reported - true_accuracy),
        "answerable_covered": sum(o.status in COVERING for o in answerable) / len(answerable),
        "stop_reason": info.stop_reason,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--abstracts", type=int, default=28)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="validity-") as scratch:
        corpus = Path(scratch) / "corpus"
        corpus.mkdir()
        for item in load_pubmedqa()[: args.abstracts]:
            (corpus / f"{item.pubid}.txt").write_text("\n\n".join(item.contexts), encoding="utf-8")
        for seed in args.seeds:
            rows.append(await one_run(corpus, seed, Path(scratch) / f"run-{seed}"))
    print(f"{'seed':>4} {'units':>6} {'rounds':>6} {'true acc':>9} {'reported':>9} {'|error|':>8} {'answerable covered':>19}")
    for row in rows:
        print(f"{row['seed']:>4} {row['units']:>6} {row['rounds']:>6} {row['true_accuracy']:>9.3f} "
              f"{row['reported_accuracy']:>9.3f} {row['abs_error']:>8.3f} {row['answerable_covered']:>19.3f}")
    worst_error = max(r["abs_error"] for r in rows)
    worst_coverage = min(r["answerable_covered"] for r in rows)
    print(f"targets: |reported - true| <= 0.03 -> worst {worst_error:.3f}; answerable covered >= 0.95 in <= 5 rounds "
          f"-> worst {worst_coverage:.3f}")
    save_json(rows, RESULTS / "exam_validity.json")
    print_result({"runs": len(rows), "worst_abs_error": f"{worst_error:.3f}",
                  "worst_answerable_covered": f"{worst_coverage:.3f}",
                  "max_rounds_used": max(r["rounds"] for r in rows)})


if __name__ == "__main__":
    asyncio.run(main())
