"""A tour of the Python API (docs/API.md): examine two targets on a small corpus with the simulated
backend, compare them, and read the run's rows: verdicts as records, and what every call cost.

    python examples/api_tour.py [OUT_DIR]     # default OUT_DIR: runs/api-tour (must be new or empty)

Nothing is paid and nothing is downloaded: `simulate=True` sends every role to the simulated backend.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from examiner.api import CompareOptions, ExamOptions, compare_runs, run_exam

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "harbor-water"
TARGETS = ("simulated", "local")
"""Two endpoints every configuration has; with simulate=True, `local` is examined as its simulated twin
`sim-local`, so the two targets answer differently."""


def main(out: Path) -> dict[str, Any]:
    """Run the tour into `out`; returns what it printed, as figures."""
    # 1. The exam: typed options in, a typed result out (a budget stop would be a status, not an exception).
    exam = run_exam(ExamOptions(corpus=CORPUS, targets=TARGETS, out=out / "exam", simulate=True, max_rounds=1))
    print(f"exam {exam.run_id}: {exam.status}, judged by {exam.judge_mode}, {len(exam.units())} knowledge units")

    # 2. Compare the two targets: one typed row per target (accuracy and coverage with 95% intervals).
    compared = compare_runs(CompareOptions(run_dirs=(exam.run_dir,)))
    for row in compared.targets:
        print(f"{row.target}: accuracy {row.accuracy:.3f} [{row.accuracy_low:.3f}, {row.accuracy_high:.3f}], "
              f"coverage {row.coverage:.3f}, {row.correct} correct / {row.incorrect} incorrect units")
    first, second = compared.targets[0], compared.targets[1]
    gap = (first.accuracy or 0.0) - (second.accuracy or 0.0)
    print(f"accuracy gap {first.target} - {second.target}: {gap:+.3f}")

    # 3. Verdicts as records: one per (answer, unit), with the judge's reason.
    verdicts = exam.verdicts().to_records()
    tally = Counter((v["target"], v["verdict"]) for v in verdicts)
    print(f"{len(verdicts)} verdicts: " + ", ".join(f"{t} {label} {n}" for (t, label), n in sorted(tally.items())))
    example = verdicts[0]
    print(f"e.g. unit {example['unit_id']} for {example['target']}: {example['verdict']}"
          + (f" ({example['reason'][:60]})" if example["reason"] else ""))

    # 4. Costs: every model call of the ledger as a typed row.
    calls = exam.costs()
    by_role: Counter[str] = Counter()
    for call in calls:
        by_role[call.role] += call.prompt_tokens + call.completion_tokens
    dollars = sum(call.cost_usd for call in calls)
    print(f"{len(calls)} calls, ${dollars:.4f}; tokens by role: "
          + ", ".join(f"{role} {tokens:,}" for role, tokens in sorted(by_role.items())))

    # 5. The same rows as a DataFrame, where pandas is installed.
    try:
        frame = exam.verdicts().to_pandas()
    except ImportError as missing:
        print(f"(no DataFrame: {missing})")
    else:
        print(f"DataFrame {frame.shape[0]} x {frame.shape[1]}: columns {', '.join(frame.columns[:4])}, ...")
    return {"status": exam.status, "targets": [row.target for row in compared.targets], "gap": gap,
            "verdicts": len(verdicts), "tally": dict(tally), "calls": len(calls), "dollars": dollars}


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("runs") / "api-tour")
