"""How close an exam's wall time comes to what its model calls allow: the staged graph (every cluster's
question before any answer, every answer before any judge call) against the streaming one (each cluster
through question -> answers -> judge -> probes as soon as its previous step is done), in one run.

    python experiments/exam_wall_time.py [--corpus corpora/harbor-water] [--latency 1.0] [--concurrency 8]
                                         [--before REV]

Both sides examine two simulated targets on the same corpus with the same seed, every endpoint answering
after `latency` x U(0.5, 1.5) seconds (the simulator's latency) with `concurrency` calls at a time. The
"before" side is a git worktree of REV (default: the commit before the streaming node was added), run with
the same Python; the "after" side is this checkout.

Figures, from each run's ledger (calls answered, round, stage) and records:
- wall_s: from the first request sent to the last reply received (the exam's calls, without start-up,
  embedding before the first call and report writing; total_s is the whole process);
- staged_bound_s: the sum over rounds and stages of ceil(calls / concurrency) x latency (calls counted on
  the busiest endpoint: the examiner-judge endpoint and the two targets work side by side): what a staged
  exam needs at the least;
- streaming_bound_s: per round, the larger of ceil(calls / concurrency) x latency (busiest endpoint) and the longest chain of
  dependent calls (a cluster's question attempts, then for each probe level an answer and a judge call, a
  probe before each level after the first) x latency, summed over rounds (the self-check is a round of
  its own);
- outcome counts per target (correct, incorrect, unanswered, uncovered), which must be equal on both sides.

Ends with `RESULT wall_s=... staged_bound_s=... streaming_bound_s=... wall_over_streaming=...
before_wall_s=... before_wall_over_streaming=... same_outcomes=...`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

from finish import RESULTS, print_result, save_json

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"knows-much": {"known": 0.7, "wrong": 0.2, "unknown": 0.1},
           "knows-little": {"known": 0.3, "wrong": 0.3, "unknown": 0.4}}


def default_before() -> str:
    """The parent of the commit that added the streaming node, or HEAD when it is not committed yet."""
    added = subprocess.run(["git", "log", "--diff-filter=A", "--format=%H", "--", "examiner/exam/nodes/examine.py"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return f"{added[-1]}^" if added else "HEAD"


def worktree(rev: str, where: Path) -> Path:
    """A checkout of `rev` whose `examiner` package finds its own agents and prompts (the installed
    package maps them from this checkout's folders)."""
    subprocess.run(["git", "worktree", "add", "--detach", str(where), rev], cwd=ROOT, check=True,
                   capture_output=True)
    for name in ("agents", "prompts"):
        link = where / "examiner" / name
        if not link.exists():
            link.symlink_to(where / name)
    return where


def settings(latency: float, concurrency: int, embeddings: Path) -> dict[str, Any]:
    def endpoint(model: str, knowledge: dict[str, float] | None = None) -> dict[str, Any]:
        options: dict[str, Any] = {"latency_s": latency}
        if knowledge:
            options["knowledge"] = knowledge
        return {"provider": "simulated", "model": model, "max_concurrency": concurrency,
                "price_input_per_1m": 0.15, "price_output_per_1m": 0.6, "options": options}

    endpoints = {"exam-sim": endpoint("sim-exam"), **{name: endpoint(f"sim-{name}", k) for name, k in TARGETS.items()}}
    return {"endpoints": endpoints, "roles": {"examiner": "exam-sim", "judge": "exam-sim", "candidate": "knows-much"},
            "embedding_cache": str(embeddings)}


def run_exam(checkout: Path, corpus: Path, config: Path, out: Path) -> float:
    """`examiner run` from `checkout` with this Python; its total seconds."""
    began = time.perf_counter()
    command = [sys.executable, "-m", "examiner.cli.main", "run", str(corpus), "--config", str(config), "--out",
               str(out), "--quiet", *[flag for name in TARGETS for flag in ("--target", name)]]
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True,
                          env=dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(checkout)), timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"exam in {checkout} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return time.perf_counter() - began


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if path.is_file() else []


def figures(run: Path, latency: float, concurrency: int) -> dict[str, Any]:
    """Wall time of the calls and the two bounds, from the run's ledger and records."""
    ledger = rows(run / "ledger.jsonl")
    answered = [r for r in ledger if r.get("outcome") == "ok" and not r.get("cache_hit")]
    ends = [float(r["ts"]) for r in answered]
    sent = [float(r["ts"]) - float(r.get("latency_s") or 0.0) for r in answered]
    wall = max(ends) - min(sent) if sent and ends else 0.0
    per_stage: Counter[tuple[int, str, str]] = Counter()
    per_round: Counter[tuple[int, str]] = Counter()
    for r in answered:
        rnd = 10**6 if r.get("stage") == "self_check" else int(r.get("round") or 0)
        per_stage[(rnd, str(r.get("stage")), str(r.get("endpoint")))] += 1
        per_round[(rnd, str(r.get("endpoint")))] += 1

    def throughput(counts: Counter[Any], group: Any) -> dict[Any, int]:
        """Per group, the most rounds of `concurrency` calls one endpoint needs (endpoints work side by side)."""
        most: dict[Any, int] = defaultdict(int)
        for key, n in counts.items():
            most[group(key)] = max(most[group(key)], math.ceil(n / concurrency))
        return most

    staged = sum(throughput(per_stage, lambda key: key[:2]).values()) * latency
    chains = longest_chains(run)
    streaming = sum(max(n, chains.get(rnd, 1)) for rnd, n in throughput(per_round, lambda key: key[0]).items()) * latency
    return {"wall_s": round(wall, 2), "calls": len(answered), "staged_bound_s": round(staged, 2),
            "streaming_bound_s": round(streaming, 2), "longest_chain_calls": chains,
            "outcomes": outcome_counts(run)}


def longest_chains(run: Path) -> dict[int, int]:
    """Per round, the most dependent calls of one cluster: its question's attempts, then answer + judge,
    then for each probe level probe + answer + judge."""
    questions = rows(run / "questions.jsonl")
    by_id = {q["id"]: q for q in questions}

    def depth(q: dict[str, Any]) -> int:
        level = 0
        while q.get("parent_id") and q["parent_id"] in by_id:
            q, level = by_id[q["parent_id"]], level + 1
        return level

    longest: dict[int, int] = defaultdict(int)
    for q in questions:
        if q.get("kind") == "probe":
            root = q
            while root.get("parent_id") in by_id:
                root = by_id[root["parent_id"]]
            chain = int(root.get("regenerations") or 0) + 1 + 2 + 3 * depth(q)
        else:
            chain = int(q.get("regenerations") or 0) + 1 + (2 if q.get("status", "ok") == "ok" else 0)
        longest[int(q["round"])] = max(longest[int(q["round"])], chain)
    return dict(longest)


def outcome_counts(run: Path) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for o in rows(run / "outcomes.jsonl"):
        counts[o["target"]][o["status"]] += 1
    return {target: dict(sorted(c.items())) for target, c in sorted(counts.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="corpora/harbor-water")
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--before", default=None, help="git revision of the staged graph (default: see the docstring)")
    args = parser.parse_args()
    corpus = (ROOT / args.corpus).resolve()
    with tempfile.TemporaryDirectory(prefix="wall-") as tmp:
        work = Path(tmp)
        config = work / "config.yaml"
        config.write_text(yaml.safe_dump(settings(args.latency, args.concurrency, work / "embeddings.sqlite")))
        before_rev = args.before or default_before()
        before_tree = worktree(before_rev, work / "checkout-before")
        try:
            results: dict[str, dict[str, Any]] = {}
            for side, checkout in (("before", before_tree), ("after", ROOT)):
                total = run_exam(checkout, corpus, config, work / f"run-{side}")
                results[side] = dict(figures(work / f"run-{side}", args.latency, args.concurrency), total_s=round(total, 2))
                print(f"{side}: {json.dumps(results[side])}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before_tree)], cwd=ROOT, capture_output=True)
    after, before = results["after"], results["before"]
    same = after["outcomes"] == before["outcomes"]
    summary = {
        "wall_s": after["wall_s"], "staged_bound_s": after["staged_bound_s"],
        "streaming_bound_s": after["streaming_bound_s"],
        "wall_over_streaming": round(after["wall_s"] / after["streaming_bound_s"], 3),
        "wall_over_staged": round(after["wall_s"] / after["staged_bound_s"], 3),
        "before_wall_s": before["wall_s"],
        "before_wall_over_streaming": round(before["wall_s"] / after["streaming_bound_s"], 3),
        "speedup": round(before["wall_s"] / after["wall_s"], 3), "same_outcomes": same,
    }
    save_json({"args": vars(args), "before_rev": before_rev, "before": before, "after": after, "summary": summary},
              RESULTS / "exam_wall_time.json")
    print_result(summary)


if __name__ == "__main__":
    main()
