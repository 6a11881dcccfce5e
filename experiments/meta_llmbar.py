"""Does meta-evaluation recover a known ranking of judges? LLMBar Natural + MT-Bench-200, JDEval and MDEval.

Part 1 (simulated, exact ground truth): three simulated evaluators right with probability 0.8 / 0.65 /
0.5 against the gold preference, meta-evaluated by a simulated meta-judge whose own decision is right
with probability 0.9 (it then follows the JDEval rules). The win-rate / Elo / Bradley-Terry ranking, with
bootstrap intervals over matches and ranks, is printed beside the baseline ranking (accuracy against gold).

Part 2 (local model): the same three simulated evaluators, meta-judged by the embedded SmolLM2-135M
on a few Natural items (--local-limit, one pair draw per item, 2-round debates, no re-asks), under a
wall-clock budget (--local-budget-s, default 420 s): the model is tiny and slow on CPU (several
seconds per call, one at a time), so this part only shows what such a meta-judge gives.

    python experiments/meta_llmbar.py [--limit N] [--local-limit 12] [--local-budget-s 420] [--skip-local]

Prints its tables and ends with `RESULT name=value ...`; writes experiments/results/meta_llmbar.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from finish import RESULTS, print_result, save_json

import examiner.simulator.meta_roles  # noqa: F401 - simulated evaluators and meta-judge
from examiner.core.config import EndpointSpec, Settings
from examiner.llm import Gateway
from examiner.meta.items import load_items
from examiner.core import rundir
from examiner.core.assessments import MetaJudgment
from examiner.meta.pipeline import MetaConfig, MetaRun, run_meta
from examiner.meta.records_file import JsonlStore

EVALUATORS = {"eval-0.80": 0.8, "eval-0.65": 0.65, "eval-0.50": 0.5}
RELIABILITY = 0.9


def sim_endpoints() -> dict[str, EndpointSpec]:
    eps = {name: EndpointSpec(provider="simulated", model=f"sim-acc{acc}", max_concurrency=64)
           for name, acc in EVALUATORS.items()}
    eps["meta-sim"] = EndpointSpec(provider="simulated", model=f"sim-rel{RELIABILITY}", max_concurrency=64)
    return eps


def summarize(run: MetaRun) -> dict[str, Any]:
    """Per evaluator: Elo and Bradley-Terry with FastChat's bootstrap intervals over matches and their ranks
    (rankings.intervals), and Elo's match-order spread (std over shuffles of the same matches, not an
    interval)."""
    r = run.rankings
    shuffled = {x["player"]: x for x in r.get("elo", {}).get("ratings", [])}
    intervals = r.get("intervals", {})
    elo = {x["player"]: x for x in intervals.get("elo", {}).get("players", [])}
    bt = {x["player"]: x for x in intervals.get("bradley_terry", {}).get("players", [])}
    wr = r.get("win_rates", {}).get("overall_win_rate", {})
    agree = r.get("agreement", {}).get("elo", {})
    return {
        "matches": r.get("matches", 0), "counts": run.counts, "usage": run.usage, "problems": run.problems,
        "per_evaluator": {e: {"baseline_accuracy": run.baseline["scores"].get(e), "win_rate": wr.get(e),
                              "elo": elo.get(e, {}).get("rating"), "elo_low": elo.get(e, {}).get("low"),
                              "elo_high": elo.get(e, {}).get("high"), "elo_rank": elo.get(e, {}).get("rank"),
                              "elo_match_order_std": shuffled.get(e, {}).get("std"),
                              "bt": bt.get(e, {}).get("rating"), "bt_low": bt.get(e, {}).get("low"),
                              "bt_high": bt.get(e, {}).get("high"), "bt_rank": bt.get(e, {}).get("rank")}
                          for e in EVALUATORS},
        "elo_order": [x["player"] for x in intervals.get("elo", {}).get("players", [])],
        "bt_rank_groups": intervals.get("bradley_terry", {}).get("groups"),
        "baseline_order": sorted(run.baseline["scores"], key=lambda e: -run.baseline["scores"][e]),
        "kendall_tau": agree.get("kendall_tau"), "spearman_rho": agree.get("spearman_rho"),
        "top1_match": agree.get("top1_match"),
    }


def fmt(x: Any, d: int = 3) -> str:
    return "-" if x is None else f"{x:.{d}f}" if isinstance(x, float) else str(x)


def print_table(title: str, s: dict[str, Any]) -> None:
    print(f"\n{title}: {s['matches']} matches; baseline order {' > '.join(s['baseline_order'])}; "
          f"Elo order {' > '.join(s['elo_order']) or '-'}; BT rank groups {s['bt_rank_groups']}")
    print("Elo and BT: 95% bootstrap over matches (FastChat); rank: 1 + evaluators wholly above; "
          "order±: Elo's std over shuffles of the same matches (match order only, not an interval)")
    print(f"{'evaluator':<11}{'true acc':>9}{'baseline':>10}{'win rate':>10}{'Elo [95% CI]':>26}{'rank':>5}"
          f"{'BT [95% CI]':>26}{'rank':>5}{'order±':>8}")
    for e, acc in EVALUATORS.items():
        row = s["per_evaluator"][e]
        elo = f"{fmt(row['elo'], 1)} [{fmt(row['elo_low'], 1)}, {fmt(row['elo_high'], 1)}]"
        bt = f"{fmt(row['bt'], 1)} [{fmt(row['bt_low'], 1)}, {fmt(row['bt_high'], 1)}]"
        print(f"{e:<11}{acc:>9.2f}{fmt(row['baseline_accuracy']):>10}{fmt(row['win_rate']):>10}{elo:>26}"
              f"{fmt(row['elo_rank']):>5}{bt:>26}{fmt(row['bt_rank']):>5}{fmt(row['elo_match_order_std'], 1):>8}")
    print(f"agreement with baseline (Elo): Kendall tau {fmt(s['kendall_tau'])}, Spearman rho {fmt(s['spearman_rho'])}, "
          f"top-1 {s['top1_match']}; counts {json.dumps({k: v for k, v in s['counts'].items() if k != 'outcomes'})}")


async def simulated_part(items: list, seed: int) -> dict[str, Any]:
    settings = Settings(endpoints=sim_endpoints(), roles={"meta_judge": "meta-sim"}, cache=True)
    out: dict[str, Any] = {}
    for method in ("jdeval", "mdeval"):
        with tempfile.TemporaryDirectory() as tmp:
            began = time.perf_counter()
            run = await run_meta(items, MetaConfig(evaluators=list(EVALUATORS), method=method, meta_judge="meta-sim",
                                                   seed=seed, both_orders=(method == "jdeval")), settings, Path(tmp))
            s = summarize(run)
            s["wall_s"] = time.perf_counter() - began
            out[method] = s
        print_table(f"simulated meta-judge (reliability {RELIABILITY}), {method.upper()}", s)
    return out


async def local_part(items: list, seed: int, budget_s: float) -> dict[str, Any]:
    eps = sim_endpoints()
    eps["smol"] = EndpointSpec(provider="local", model="smollm2-135m-instruct", max_concurrency=1, supports_n=False,
                               structured_output="json_object", timeout_s=300, max_attempts=2)
    settings = Settings(endpoints=eps, roles={"meta_judge": "smol"}, cache=True)
    out: dict[str, Any] = {}
    began_all = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for method in ("jdeval", "mdeval"):
            left = budget_s - (time.perf_counter() - began_all)
            run_dir = Path(tmp) / method
            cfg = MetaConfig(evaluators=list(EVALUATORS), method=method, meta_judge="smol", seed=seed, draws=1,
                             max_rounds=2, reasoning_words=50, statement_words=60, bootstrap=200,
                             concurrency=1)  # one item at a time, so finished work survives the budget
            began = time.perf_counter()
            entry: dict[str, Any] = {"items": len(items), "draws_per_item": 1}
            if left < 30:
                entry["skipped"] = "no time left in the budget"
                out[method] = entry
                continue
            async with Gateway(settings, run_dir=run_dir, cache=True, max_repairs=0) as gw:
                try:
                    run = await asyncio.wait_for(run_meta(items, cfg, settings, run_dir, gateway=gw), timeout=left)
                    entry.update(summarize(run))
                    entry["completed"] = True
                except asyncio.TimeoutError:
                    entry["completed"] = False
                js = JsonlStore(run_dir / rundir.JUDGMENTS, MetaJudgment).values()
                entry["judgments"] = len(js)
                entry["usable"] = sum(j.outcome is not None for j in js)
                entry["unparseable"] = sum(j.status == "unparseable" for j in js)
                entry["failed"] = sum(j.status == "failed" for j in js)
                gold = {i.id: i.gold_label for i in items}
                answered = [j for j in js if j.better_answer]
                entry["meta_answer_accuracy"] = (sum(j.better_answer == gold[j.item_id] for j in answered) / len(answered)
                                                 if answered else None)
                entry["calls"] = gw.totals.calls
                entry["sample_unreadable"] = [j.raw or (j.unscored.reason if j.unscored is not None else "") for j in js if j.outcome is None][:2]
            entry["wall_s"] = time.perf_counter() - began
            out[method] = entry
            print(f"\nlocal SmolLM2-135M as meta-judge, {method.upper()}: {entry['judgments']} judgments in "
                  f"{entry['wall_s']:.0f} s ({entry['calls']} calls, completed={entry['completed']}): usable {entry['usable']}, "
                  f"unparseable {entry['unparseable']}, failed {entry['failed']}, own-answer accuracy "
                  f"{fmt(entry['meta_answer_accuracy'])}")
            if entry.get("completed") and entry.get("elo_order"):
                print_table(f"local meta-judge, {method.upper()}", entry)
    out["wall_s"] = time.perf_counter() - began_all
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, help="items per subset (default: all 100 + 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--local-limit", type=int, default=12, help="Natural items meta-judged by the local model")
    ap.add_argument("--local-budget-s", type=float, default=420.0)
    ap.add_argument("--skip-local", action="store_true")
    args = ap.parse_args()
    natural, _ = load_items("llmbar:Natural", limit=args.limit)
    mtbench, _ = load_items("llmbar:Processed_MT-Bench_200", limit=args.limit)
    items = natural + mtbench
    print(f"items: {len(natural)} LLMBar Natural + {len(mtbench)} MT-Bench-200; evaluators {EVALUATORS}")
    sim = await simulated_part(items, args.seed)
    local = {"skipped": True} if args.skip_local else await local_part(natural[: args.local_limit], args.seed, args.local_budget_s)
    result = {"items": len(items), "evaluators": EVALUATORS, "meta_reliability": RELIABILITY, "simulated": sim, "local": local}
    save_json(result, RESULTS / "meta_llmbar.json", indent=2, default=str)
    j, m = sim["jdeval"], sim["mdeval"]
    figures = {"items": len(items), "jdeval_tau": fmt(j["kendall_tau"]), "jdeval_top1": j["top1_match"],
               "jdeval_order": ">".join(j["elo_order"]), "mdeval_tau": fmt(m["kendall_tau"]),
               "mdeval_top1": m["top1_match"], "mdeval_order": ">".join(m["elo_order"]),
               "jdeval_order_consistency": fmt(j["counts"].get("order_consistency", {}).get("consistency"))}
    if not args.skip_local:
        for method in ("jdeval", "mdeval"):
            e = local.get(method, {})
            figures[f"local_{method}_usable"] = f"{e.get('usable', 0)}/{e.get('judgments', 0)}"
            figures[f"local_{method}_tau"] = fmt(e.get("kendall_tau"))
        figures["local_wall_s"] = f"{local['wall_s']:.0f}"
    print_result(figures)


if __name__ == "__main__":
    asyncio.run(main())
