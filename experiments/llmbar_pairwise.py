"""Pairwise judging with swap on LLMBar Natural: accuracy, consistency and position bias (docs/METHODS.md §4).

Why: checks that the JudgeLM pipeline (prompt, score-line parsing, swap, metrics) is right end to end.
Two backends:
- `sim`: the simulated judge with known knobs (gold via the server's oracle, accuracy 0.8, position
  bias +0.2 toward the first answer), so the measured figures must land near what the knobs imply:
  consistency about 0.8, every inconsistent pair favouring the first position;
- `local`: the embedded SmolLM2-135M model (weak: the point is that the pipeline runs and the metrics
  are computed on real output, unparseable replies included). It serves one request at a time at
  about 5-10 s per call on 2 cores with LLMBar's long prompts, so `--limit` picks the first N pairs
  (each judged twice). Grade-only unless `--full-reason`. The 135M model does not keep the "two
  numbers on line 1" format (its replies are counted as unparseable, as they must be); `--json-grades`
  asks for the same grades as a JSON object instead, which the llama.cpp server could enforce by
  grammar, but the local endpoint currently answers that request with HTTP 500 (reported to the lead).

Run: python experiments/llmbar_pairwise.py [--backend sim|local|both] [--limit N] [--full-reason] [--json-grades]
Writes experiments/results/llmbar_pairwise.json and ends with one `RESULT ...` line.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from finish import print_result, save_json  # noqa: E402

import examiner.simulator.judging_roles  # noqa: E402,F401 - simulated judging behaviours
from examiner.core.config import EndpointSpec, Settings  # noqa: E402
from examiner.corpus.benchmarks import load_llmbar  # noqa: E402
from examiner.judging.dataset import Row  # noqa: E402
from examiner.core.labels import preference_from_text  # noqa: E402
from examiner.judging.pairwise import PairwiseOptions, number, run_pairwise  # noqa: E402
from examiner.judging.sections import pairwise_section  # noqa: E402
from examiner.core.assessments import pairwise_oracle  # noqa: E402
from examiner.llm.gateway import Gateway  # noqa: E402
from examiner.simulator import SimulatedServer  # noqa: E402

SIM_OPTIONS = {"pairwise_accuracy": 0.8, "pairwise_position_bias": 0.2}


def rows(limit: int | None) -> list[Row]:
    items = load_llmbar(["Natural"])
    if limit:
        items = items[:limit]
    return [Row(line=i + 1, id=it.id, instruction=it.input, output_1=it.output_1, output_2=it.output_2,
                label=preference_from_text(it.label)) for i, it in enumerate(items)]


async def judge(settings: Settings, data: list[Row], opts: PairwiseOptions) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    started = time.perf_counter()
    async with Gateway(settings) as gw:
        records = await run_pairwise(gw, data, opts)
        calls = gw.totals.calls
    wall = time.perf_counter() - started
    section = pairwise_section(records)
    return records, {"wall_s": round(wall, 2), "calls": calls, **section}


def run_sim(data: list[Row], opts: PairwiseOptions) -> dict[str, Any]:
    with SimulatedServer(SIM_OPTIONS, seed=0) as url:
        server_oracle = pairwise_oracle((r.instruction, r.output_1, r.output_2, number(r.label) or 0) for r in data)
        post_oracle(url, server_oracle)
        spec = EndpointSpec(provider="simulated", base_url=url, model="sim-judge", max_concurrency=16)
        settings = Settings(endpoints={"sim": spec}, roles={"pairwise": "sim"})
        _, out = asyncio.run(judge(settings, data, opts))
    out["sim_options"] = SIM_OPTIONS
    return out


def post_oracle(url: str, items: dict[str, str]) -> None:
    """Register gold through the HTTP route, as a simulated server in another process would need."""
    import httpx

    response = httpx.post(url.removesuffix("/v1") + "/sim/oracle", json={"items": items}, timeout=10)
    response.raise_for_status()


def run_local(data: list[Row], opts: PairwiseOptions) -> dict[str, Any]:
    settings = Settings(roles={"pairwise": "local"})
    records, out = asyncio.run(judge(settings, data, opts))
    out["examples_unparseable"] = [r["unscored"] for r in records if r["verdict"] is None][:5]
    return out


def _f(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "  n/a"
    return f"{value:5.3f}" if isinstance(value, float) else str(value)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=("sim", "local", "both"), default="both")
    ap.add_argument("--limit", type=int, default=None, help="first N pairs for the local model (default all 100)")
    ap.add_argument("--json-grades", action="store_true",
                    help="local model: ask for the grades as JSON (currently HTTP 500 from the local server)")
    ap.add_argument("--full-reason", action="store_true", help="local model: ask for the reason too (slower)")
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "results" / "llmbar_pairwise.json")
    args = ap.parse_args()

    results: dict[str, Any] = {}
    if args.backend in ("sim", "both"):
        results["sim"] = run_sim(rows(None), PairwiseOptions(swap=True))
    if args.backend in ("local", "both"):
        results["local"] = run_local(rows(args.limit), PairwiseOptions(
            swap=True, grade_only=not args.full_reason, structured=args.json_grades))
        results["local"]["grade_only"] = not args.full_reason
        results["local"]["json_grades"] = args.json_grades
        results["local"]["limit"] = args.limit

    header = ("backend", "pairs", "judgm", "unpars", "acc", "macroF1", "consist", "bias1st", "bias2nd", "dBias",
              "b1st/all", "b2nd/all", "wall_s")
    print("LLMBar Natural, pairwise with swap (bias = share of inconsistent pairs; /all = share of all pairs)")
    print(" | ".join(f"{h:>8}" for h in header))
    figures: dict[str, Any] = {}
    for name, res in results.items():
        agree, swap = res.get("agreement", {}), res.get("swap", {})
        line = (name, swap.get("n_pairs"), res["n_judgments"], res["n_unparseable"], agree.get("accuracy"),
                agree.get("macro_f1"), swap.get("consistency"), swap.get("bias_first"), swap.get("bias_second"),
                swap.get("delta_bias"), swap.get("bias_first_all_pairs"), swap.get("bias_second_all_pairs"),
                res["wall_s"])
        print(" | ".join(f"{_f(v):>8}" for v in line))
        for key, value in (("pairs", swap.get("n_pairs")), ("accuracy", agree.get("accuracy")),
                           ("consistency", swap.get("consistency")), ("bias_first", swap.get("bias_first")),
                           ("bias_second", swap.get("bias_second")), ("delta_bias", swap.get("delta_bias")),
                           ("unparseable", res["n_unparseable"]), ("wall_s", res["wall_s"])):
            figures[f"{name}_{key}"] = value
    save_json({"figures": figures, "results": results}, args.out, indent=2, default=str)
    print_result({k: _f(v).strip() for k, v in figures.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
