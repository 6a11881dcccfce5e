"""Throughput of meta-evaluation against the zero-latency simulated server (in its own process).

Measures, on LLMBar items with three simulated evaluators and a simulated meta-judge:
- step 1: every evaluator's assessment of 334 items;
- ~1,000 JDEval meta-judgments (334 items x 3 seeded pair draws);
- 200 five-round MDEval debates (100 items x 2 draws; the referee asks 4 questions, then the round-5
  verdict is forced: 5 referee + 8 debater calls per debate);
- Elo (K=4) over 200 seeded shuffles of 10,000 synthetic matches, and Bradley-Terry with 1,000
  bootstrap resamples over the same matches.
Wall time and model calls for each; the client (gateway, LangGraph, pipeline) runs here, the server in a
child process so they do not share a GIL.

    python experiments/bench_meta.py

Prints its table and ends with `RESULT name=value ...`; writes experiments/results/bench_meta.json.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from finish import RESULTS, print_result, save_json

from examiner.core.config import EndpointSpec, Settings
from examiner.llm import Gateway
from examiner.simulator import SimulatedProcess
from examiner.meta import ranking
from examiner.meta.items import load_items
from examiner.core import rundir
from examiner.core.assessments import Assessment
from examiner.core.labels import Preference
from examiner.meta.pipeline import MetaConfig, collect_assessments, run_meta
from examiner.meta.records_file import JsonlStore
from examiner.agents.prompting.meta_blocks import decision_text

EVALUATORS = {"e80": "sim-acc0.8", "e65": "sim-acc0.65", "e50": "sim-acc0.5"}
MAX_CONCURRENCY = 64
"""Per endpoint (4 endpoints)."""


def settings(url: str) -> Settings:
    eps = {n: EndpointSpec(provider="simulated", base_url=url, model=m, max_concurrency=MAX_CONCURRENCY) for n, m in EVALUATORS.items()}
    eps["meta"] = EndpointSpec(provider="simulated", base_url=url, model="sim-rel0.9", max_concurrency=MAX_CONCURRENCY)
    return Settings(endpoints=eps, roles={"meta_judge": "meta"}, cache=False)


async def stats(url: str) -> dict:
    async with httpx.AsyncClient() as c:
        return (await c.get(url.removesuffix("/v1") + "/sim/stats")).json()


async def bench_models(url: str) -> dict:
    items, _ = load_items("llmbar:Natural,Processed_MT-Bench_200,Processed_LLMEval2", limit=334)
    async with httpx.AsyncClient() as c:
        gold = {i.oracle_key(): decision_text(i.gold_label) for i in items}
        (await c.post(url.removesuffix("/v1") + "/sim/oracle", json={"items": gold})).raise_for_status()
    out: dict = {}
    s = settings(url)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        async with Gateway(s, run_dir=None, cache=False) as gw:
            store: JsonlStore[Assessment] = JsonlStore(run_dir / rundir.ASSESSMENTS, Assessment, key="assessment")
            began = time.perf_counter()
            await collect_assessments(gw, items, list(EVALUATORS), store, concurrency=192)
            store.close()
            out["step1"] = {"assessments": len(store.values()), "calls": gw.totals.calls,
                            "wall_s": time.perf_counter() - began}
        for method, n_items, draws in (("jdeval", 334, 3), ("mdeval", 100, 2)):
            async with Gateway(s, run_dir=None, cache=False) as gw:
                cfg = MetaConfig(evaluators=list(EVALUATORS), method=method, meta_judge="meta", draws=draws,
                                 concurrency=256, bootstrap=200, shuffles=200)
                before = (await stats(url))["requests"]
                began = time.perf_counter()
                run = await run_meta(items[:n_items], cfg, s, run_dir, gateway=gw)  # step 1 resumes from the store
                wall = time.perf_counter() - began
                served = (await stats(url))["requests"] - before
                entry = {"judgments": run.counts["judgments"], "usable": run.counts["usable"], "calls": gw.totals.calls,
                         "server_requests": served, "wall_s": wall, "calls_per_s": gw.totals.calls / wall,
                         "elo_order": [r["player"] for r in run.rankings["elo"]["ratings"]]}
                if method == "mdeval":
                    entry["rounds"] = run.counts["debate_rounds"]
                    entry["forced_verdicts"] = run.counts["forced_verdicts"]
                out[method] = entry
    return out


def bench_elo() -> dict:
    rng = np.random.default_rng(0)
    players = [f"p{i}" for i in range(6)]
    strength = np.linspace(0, 1.5, len(players))
    matches = []
    for _ in range(10_000):
        i, j = rng.choice(len(players), 2, replace=False)
        p = 1 / (1 + np.exp(strength[j] - strength[i]))
        u = rng.random()
        matches.append((players[i], players[j],
                        Preference.TIE if abs(u - p) < 0.05 else Preference.FIRST if u < p else Preference.SECOND))
    began = time.perf_counter()
    elo = ranking.elo(matches, n_shuffles=200, seed=0)
    elo_s = time.perf_counter() - began
    began = time.perf_counter()
    bt = ranking.bradley_terry(matches, n_bootstrap=1000, seed=0)
    bt_s = time.perf_counter() - began
    return {"matches": len(matches), "shuffles": 200, "elo_s": elo_s, "bt_bootstrap_1000_s": bt_s,
            "elo_order": elo.ranking(), "bt_order": bt.ranking(),
            "max_elo_std": max(r.std for r in elo.ratings)}


async def main() -> None:
    options = {"referee_questions": 4, "latency_s": 0}
    with SimulatedProcess(options, seed=0) as url:
        models = await bench_models(url)
    elo = bench_elo()
    print(f"{'stage':<34}{'count':>8}{'calls':>8}{'wall s':>9}{'calls/s':>9}")
    s1 = models["step1"]
    print(f"{'step 1 assessments':<34}{s1['assessments']:>8}{s1['calls']:>8}{s1['wall_s']:>9.2f}{s1['calls'] / s1['wall_s']:>9.0f}")
    j, m = models["jdeval"], models["mdeval"]
    print(f"{'JDEval meta-judgments':<34}{j['judgments']:>8}{j['calls']:>8}{j['wall_s']:>9.2f}{j['calls_per_s']:>9.0f}")
    print(f"{'MDEval 5-round debates':<34}{m['judgments']:>8}{m['calls']:>8}{m['wall_s']:>9.2f}{m['calls_per_s']:>9.0f}")
    print(f"  debate rounds {m['rounds']}, forced verdicts {m['forced_verdicts']}")
    print(f"{'Elo, 200 shuffles x 10,000 matches':<34}{elo['matches']:>8}{'-':>8}{elo['elo_s']:>9.3f}")
    print(f"{'Bradley-Terry + 1,000 bootstrap':<34}{elo['matches']:>8}{'-':>8}{elo['bt_bootstrap_1000_s']:>9.3f}")
    save_json({"models": models, "ranking": elo}, RESULTS / "bench_meta.json", indent=2)
    print_result({"jdeval_judgments": j["judgments"], "jdeval_calls": j["calls"], "jdeval_wall_s": f"{j['wall_s']:.2f}",
                  "mdeval_debates": m["judgments"], "mdeval_calls": m["calls"], "mdeval_wall_s": f"{m['wall_s']:.2f}",
                  "step1_calls": s1["calls"], "step1_wall_s": f"{s1['wall_s']:.2f}",
                  "elo_200x10000_s": f"{elo['elo_s']:.3f}", "bt_boot1000_s": f"{elo['bt_bootstrap_1000_s']:.3f}"})


if __name__ == "__main__":
    asyncio.run(main())
