"""Does the question gate catch defective questions, and what does it cost? (issue 43, item 1)

The simulated examiner writes a seeded 20 % of its questions defective, a fifth of them of each of five
kinds (unanswerable, wrong_citation, guessable, near_duplicate, wrong_language; examiner/simulator/
question_defects.py), so the truth of every draft the gate sees is known (`defect_of`). Simulated exams of
the harbor-water corpus run with the gate on; every draft the gate checked (a rewritten question's
rejected draft is recorded beside it) is scored:
- recall per kind: the share of that kind's drafts flagged by the check meant for it (answerable,
  citation, guessable, near_duplicate, language). A run's first copy of the stock near-duplicate has
  nothing earlier to copy, so it is not counted as a near-duplicate; a sound draft with the very words of a
  question asked in an earlier round (its units came back uncovered and the examiner, given the same
  prompt, wrote the same question) is a true copy, counted apart as a repeat;
- false rejects: the share of sound drafts any check flagged (a guessable tag counts);
- cost share: the gate's ledger stage `question_gate` over the whole exam's cost, two targets.

What is real and what is simulated: the language check (langdetect), the near-duplicate check
(all-MiniLM-L6-v2 cosines), the fuzzy citation match of the checker's quotes, the rewrite and the record
keeping run as in any exam; the checker's and the guesser's judgments come from the simulator, which knows
the truth (with `--gate-noise p` it flips each of them with probability p), so for the three judged kinds
the figure measures the gate's plumbing, not a real model's judgment.

    python experiments/question_gate.py [--seeds 0 1 2 3] [--share 0.2] [--gate-noise 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from finish import RESULTS, print_result, save_json

from examiner.core.config import EndpointSpec, Settings
from examiner.core.records import QuestionRecord
from examiner.exam.gate.checks import bare
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.run_writer import RunStore
from examiner.simulator.behaviours import ref_ids
from examiner.simulator.question_defects import DEFECT_KINDS, defect_of

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "harbor-water"
CHECK_OF = {"unanswerable": "answerable", "wrong_citation": "citation", "guessable": "guessable",
            "near_duplicate": "near_duplicate", "wrong_language": "language"}
"""The check meant to catch each kind."""


def drafts(question: QuestionRecord) -> list[tuple[str, int, list[Any]]]:
    """Every draft the gate checked for one question: (text, attempt, failed check names)."""
    found = []
    if question.gate_draft:
        found.append((question.gate_draft, 0, [c.name for c in question.gate_draft_checks if not c.passed]))
    found.append((question.text, question.gate_rewrites, [c.name for c in question.gate if not c.passed]))
    return found


async def one_run(seed: int, options: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """One simulated exam with the gate on; its drafts scored against the truth and its cost by stage."""
    sim = EndpointSpec(provider="simulated", model="sim", max_concurrency=16, options={**options, "seed": seed},
                       price_input_per_1m=0.15, price_output_per_1m=0.60)
    endpoints = {"sim": sim, "sim-b": sim.model_copy(update={"model": "sim-b"})}
    settings = Settings(endpoints=endpoints, roles={r: "sim" for r in ("examiner", "candidate", "judge")},
                        exam={"question_gate": True, "cluster_size": 3, "max_rounds": 6, "seed": seed})
    await start_exam(settings, ExamRequest([str(CORPUS)], targets=["sim", "sim-b"]), run_dir, quiet=True, report=False)
    questions = {q.cluster_id + q.text: q for q in RunStore(run_dir).all(QuestionRecord).values()
                 if q.kind == "question" and q.gate}
    rows, first_copy = [], True
    asked: dict[str, int] = {}
    for question in sorted(questions.values(), key=lambda q: (q.round, q.cluster_id)):
        if question.status == "ok":
            asked.setdefault(bare(question.text), question.round)
    for question in sorted(questions.values(), key=lambda q: (q.round, q.cluster_id)):
        for text, attempt, failed in drafts(question):
            kind = defect_of(seed, options, ref_ids(text), attempt)
            if kind == "near_duplicate" and first_copy and "near_duplicate" not in failed:
                kind, first_copy = "first_copy", False  # the run's first copy: nothing earlier to copy
            elif kind is None and asked.get(bare(text), question.round) < question.round:
                kind = "repeat"  # the same words asked in an earlier round (same units, same prompt): a true copy
            rows.append({"kind": kind or "sound", "failed": failed, "text": bare(text)[:80]})
    cost: dict[str, float] = {}
    for line in (run_dir / "ledger.jsonl").read_text().splitlines():
        record = json.loads(line)
        stage = record.get("stage") or ""
        cost[stage] = cost.get(stage, 0.0) + float(record.get("cost_usd") or 0.0)
    return {"seed": seed, "drafts": rows, "cost_by_stage": dict(cost)}


def score(runs: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [row for run in runs for row in run["drafts"]]
    recall = {}
    for kind in DEFECT_KINDS:
        of_kind = [row for row in rows if row["kind"] == kind]
        caught = sum(CHECK_OF[kind] in row["failed"] for row in of_kind)
        recall[kind] = {"drafts": len(of_kind), "caught": caught, "recall": caught / len(of_kind) if of_kind else None}
    repeats = [row for row in rows if row["kind"] == "repeat"]
    sound = [row for row in rows if row["kind"] == "sound"]
    flagged = [row for row in sound if row["failed"]]
    gate = sum(run["cost_by_stage"].get("question_gate", 0.0) for run in runs)
    total = sum(sum(run["cost_by_stage"].values()) for run in runs)
    return {"recall": recall, "repeats": len(repeats), "repeats_caught": sum("near_duplicate" in r["failed"] for r in repeats),
            "sound_drafts": len(sound), "sound_flagged": len(flagged),
            "false_reject": len(flagged) / len(sound), "false_reject_checks": Counter(n for r in flagged for n in r["failed"]),
            "false_reject_examples": flagged[:10], "gate_cost_usd": gate, "exam_cost_usd": total,
            "gate_cost_share": gate / total}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--share", type=float, default=0.2, help="share of defective questions")
    parser.add_argument("--gate-noise", type=float, default=0.0, help="the simulated checker's flip chance")
    parser.add_argument("--out", type=Path, default=RESULTS / "question_gate.json")
    args = parser.parse_args()
    options = {"defective_questions": {"share": args.share}, "gate_noise": args.gate_noise}
    runs = []
    with tempfile.TemporaryDirectory(prefix="question-gate-") as scratch:
        for seed in args.seeds:
            runs.append(await one_run(seed, options, Path(scratch) / f"run-{seed}"))
    figures = score(runs)
    for kind, row in figures["recall"].items():
        print(f"{kind:16s} drafts {row['drafts']:4d} caught {row['caught']:4d} recall {row['recall']}")
    print(f"sound drafts {figures['sound_drafts']}, flagged {figures['sound_flagged']} "
          f"({dict(figures['false_reject_checks'])}); gate ${figures['gate_cost_usd']:.4f} of "
          f"${figures['exam_cost_usd']:.4f}")
    save_json({"seeds": args.seeds, "share": args.share, "gate_noise": args.gate_noise, **figures}, args.out)
    recalls = [row["recall"] for row in figures["recall"].values() if row["recall"] is not None]
    print_result({"gate_recall_min": f"{min(recalls):.3f}", "gate_false_reject": f"{figures['false_reject']:.4f}",
                  "gate_cost_share": f"{figures['gate_cost_share']:.3f}"})


if __name__ == "__main__":
    asyncio.run(main())
