"""Fault tolerance: the same exam against a standalone simulated server that injects no faults, 20 % and
40 % mixed faults (429 with Retry-After, 500, stalls past the client timeout, malformed and truncated
JSON, empty choices, in equal shares).

    python experiments/fault_tolerance.py [--corpus corpora/harbor-water] [--rates 0.2,0.4]

Prints, per fault rate, the outcome agreement with the clean run (units whose final status is the clean
run's), accuracy and coverage with their 95 % cluster-bootstrap intervals, requests served, faults
injected, retried attempts, re-asks after unusable replies and failed calls; then a RESULT line. All
calls are at temperature 0 with a seed, so faults should cost requests and time, never outcomes.
tests/llm/test_faults.py runs `exam_at` at 0 and 20 % and asserts exactly that.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from finish import RESULTS, print_result, save_json

from examiner.core.config import EndpointSpec, Settings
from examiner.core.records import UnitOutcome
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.run_writer import RunStore
from examiner.reporting.run_reader import load_run
from examiner.reporting.summary import target_scores
from examiner.simulator import SimulatedProcess, mixed_faults

PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}
ROLES = ("examiner", "candidate", "judge")
CLIENT_TIMEOUT_S = 0.5
SERVER_STALL_S = 2.0
"""A `timeout` fault answers only after SERVER_STALL_S, past the client timeout, so the timeout fires."""


def settings_for(url: str) -> Settings:
    spec = EndpointSpec(provider="simulated", base_url=url, model="sim", price_input_per_1m=2.5,
                        price_output_per_1m=10.0, max_concurrency=16, timeout_s=CLIENT_TIMEOUT_S,
                        max_attempts=10, backoff_base_s=0.02)
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": 5})


async def exam_at(rate: float, corpus: Path, run_dir: Path) -> dict[str, Any]:
    """One exam at fault rate `rate`: statuses by unit, scores, ledger counts and server counters."""
    options = {"knowledge": PROFILE, "faults": mixed_faults(rate), "timeout_sleep_s": SERVER_STALL_S,
               "retry_after_s": 0.05}
    server = SimulatedProcess(options, seed=0)
    started = time.perf_counter()
    with server as url:
        info = await start_exam(settings_for(url), ExamRequest([str(corpus)], run_id="faults"), run_dir,
                                quiet=True, report=False)
        stats = server.stats()
    seconds = time.perf_counter() - started
    ledger = RunDir(run_dir).read_ledger()
    scores = target_scores(load_run(run_dir), "sim")
    return {
        "rate": rate,
        "status": info.status,
        "units": info.units,
        "seconds": round(seconds, 1),
        "statuses": {key: o.status for key, o in RunStore(run_dir).all(UnitOutcome).items()},
        "accuracy": scores["accuracy"],
        "coverage": scores["coverage"],
        "requests": stats["requests"],
        "faults": stats["faults"],
        "attempts": dict(Counter(a["status"] for r in ledger for a in r.get("attempts", []))),
        "retries": sum(max(0, len(r.get("attempts", [])) - 1) for r in ledger),
        "re_asks": sum(1 for r in ledger if r.get("repair")),
        "failed_calls": sum(1 for r in ledger if r.get("outcome") == "failed"),
    }


def agreement(run: dict[str, Any], clean: dict[str, Any]) -> float:
    """Share of the clean run's units that end with the same status (a unit missing counts as different)."""
    same = sum(run["statuses"].get(key) == status for key, status in clean["statuses"].items())
    return same / len(clean["statuses"]) if clean["statuses"] else 0.0


def interval(figure: dict[str, Any]) -> str:
    return f"{figure['value']:.3f} [{figure['low']:.3f}, {figure['high']:.3f}]"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=Path("corpora/harbor-water"))
    parser.add_argument("--rates", default="0.2,0.4", help="fault rates to compare with the clean run")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        runs = [await exam_at(rate, args.corpus, Path(scratch) / f"rate{rate}") for rate in [0.0, *rates]]
    clean = runs[0]
    for run in runs:
        run["agreement"] = agreement(run, clean)
        print(f"faults {run['rate']:.0%}: {run['status']}, {len(run['statuses'])}/{run['units']} units with an "
              f"outcome, agreement with clean {run['agreement']:.3f}, accuracy {interval(run['accuracy'])}, "
              f"coverage {interval(run['coverage'])}")
        print(f"    {run['requests']} requests, faults {run['faults']}, attempts {run['attempts']}, "
              f"{run['retries']} retried attempts, {run['re_asks']} re-asks, {run['failed_calls']} failed calls, "
              f"{run['seconds']} s")
    save_json([{k: v for k, v in run.items() if k != "statuses"} for run in runs], RESULTS / "fault_tolerance.json")
    figures: dict[str, Any] = {"units": clean["units"], "accuracy_clean": f"{clean['accuracy']['value']:.3f}",
                               "coverage_clean": f"{clean['coverage']['value']:.3f}"}
    for run in runs[1:]:
        pct = f"{run['rate'] * 100:.0f}"
        figures |= {f"agreement_{pct}": f"{run['agreement']:.3f}", f"accuracy_{pct}": f"{run['accuracy']['value']:.3f}",
                    f"coverage_{pct}": f"{run['coverage']['value']:.3f}", f"retries_{pct}": run["retries"],
                    f"re_asks_{pct}": run["re_asks"], f"lost_{pct}": clean["units"] - len(run["statuses"])}
    print_result(figures)


if __name__ == "__main__":
    asyncio.run(main())
