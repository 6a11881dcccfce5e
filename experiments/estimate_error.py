"""How far `examiner estimate` (a pilot, extrapolated with a range) is from the full run it predicts.

For each case, the estimate runs its pilot into one folder and the full exam into another, both with the
same flags and prices, then the predicted range is compared with the actual calls, tokens, dollars,
rounds and clusters of the full run (its ledger and run.json). Dollars are at a named price: every
endpoint (the local model and its simulated twin) is priced $0.15 per 1M prompt tokens and $0.60 per
1M completion tokens (the config written below), so the local model's tokens have a dollar figure.

    python experiments/estimate_error.py                # simulator cases only (about a minute)
    python experiments/estimate_error.py --local        # adds the embedded model (slow: minutes)
    python experiments/estimate_error.py --only local_handbook3

Cases: examiner-handbook and harbor-water on the simulator (`--simulate`), and with `--local` the
embedded SmolLM2 model (llama.cpp) on three handbook files with at most 2 rounds and a pilot of 2 clusters
(so that the pilot examines a part of the corpus and the full run stays under ten minutes).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from finish import RESULTS, print_result, save_json

from examiner.cli.main import main
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.llm.ledger import answered, spent_usd

PRICE_IN, PRICE_OUT = 0.15, 0.60
"""Dollars per 1M prompt / completion tokens of every endpoint in these runs."""

SIM_CASES: dict[str, tuple[list[str], list[str]]] = {
    "sim_handbook": (["corpora/examiner-handbook", "--simulate"], []),
    "sim_harbor": (["corpora/harbor-water", "--simulate"], []),
}
"""Case -> (flags of both `estimate` and `run`, flags of `estimate` only)."""
HANDBOOK3 = [f"corpora/examiner-handbook/{name}.md" for name in ("01-exam", "02-clustering", "03-judging")]
LOCAL_CASES: dict[str, tuple[list[str], list[str]]] = {
    "local_handbook3": ([*HANDBOOK3, "--max-rounds", "2"], ["--pilot-clusters", "2"]),
}
FIGURES = ("calls", "prompt_tokens", "completion_tokens", "dollars", "rounds", "clusters")


def write_config(folder: Path) -> Path:
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"local": {
        "provider": "local", "model": "smollm2-135m-instruct", "max_concurrency": 1, "supports_n": False,
        "structured_output": "json_object_schema", "price_input_per_1m": PRICE_IN, "price_output_per_1m": PRICE_OUT,
    }}}), encoding="utf-8")
    return config


def actual(run_dir: Path) -> dict[str, float]:
    """What the full run made and paid: calls answered (not from the cache), tokens, dollars, rounds, clusters."""
    records = [r for r in answered(RunDir(run_dir).ledger_records()) if not r.cache_hit]
    info = RunDir(run_dir).read_info()
    return {
        "calls": len(records), "prompt_tokens": sum(r.prompt_tokens for r in records),
        "completion_tokens": sum(r.completion_tokens for r in records),
        "dollars": spent_usd(RunDir(run_dir).ledger_records()),
        "rounds": len({r.round for r in info.rounds}), "clusters": sum(r.clusters for r in info.rounds),
    }


def predicted(estimate: dict[str, Any]) -> dict[str, dict[str, float]]:
    total = estimate["total"]
    return {"calls": total["calls"], "prompt_tokens": total["prompt_tokens"],
            "completion_tokens": total["completion_tokens"], "dollars": total["dollars"],
            "rounds": estimate["rounds"], "clusters": estimate["clusters"]}


def run_case(name: str, flags: list[str], pilot_flags: list[str], work: Path, config: Path) -> dict[str, Any]:
    pilot, full = work / f"{name}-pilot", work / f"{name}-full"
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the figures are read from estimate.json
        assert main(["estimate", *flags, *pilot_flags, "--config", str(config), "--out", str(pilot), "--quiet",
                     "--json"]) == 0
    estimate_s = time.perf_counter() - started
    estimate = json.loads((pilot / rundir.ESTIMATE).read_text())
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", *flags, "--config", str(config), "--out", str(full), "--quiet"]) in (0, 3)
    run_s = time.perf_counter() - started
    truth, guess = actual(full), predicted(estimate)
    rows = {}
    for figure in FIGURES:
        g = guess[figure]
        rows[figure] = {"actual": truth[figure], "predicted": g["value"], "low": g["low"], "high": g["high"],
                        "covered": g["low"] <= truth[figure] <= g["high"],
                        "error": (g["value"] - truth[figure]) / truth[figure] if truth[figure] else 0.0}
    pilot_paid = sum(r["cost_usd"] for r in estimate["pilot_spent"])
    return {"flags": flags, "pilot_flags": pilot_flags, "units": estimate["units"], "pilot_units": estimate["pilot_units"],
            "pilot_dollars": pilot_paid, "estimate_s": round(estimate_s, 1), "run_s": round(run_s, 1),
            "figures": rows}


def show(name: str, case: dict[str, Any]) -> None:
    print(f"\n{name}: {case['units']} units, pilot {case['pilot_units']} units (paid ${case['pilot_dollars']:.5f}); "
          f"estimate {case['estimate_s']} s, run {case['run_s']} s")
    for figure, row in case["figures"].items():
        fmt = (lambda x: f"{x:.5f}") if figure == "dollars" else (lambda x: f"{x:,.0f}")
        print(f"  {figure:18} actual {fmt(row['actual']):>10}  predicted {fmt(row['predicted']):>10} "
              f"[{fmt(row['low'])}, {fmt(row['high'])}]  {'covered' if row['covered'] else 'MISSED'}  "
              f"error {row['error']:+.0%}")


def run(args: argparse.Namespace) -> None:
    cases = dict(SIM_CASES, **(LOCAL_CASES if args.local else {}))
    if args.only:
        cases = {name: flags for name, flags in {**SIM_CASES, **LOCAL_CASES}.items() if name in args.only}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="estimate-error-") as scratch:
        work = Path(args.keep or scratch)
        work.mkdir(parents=True, exist_ok=True)
        config = write_config(work)
        for name, (flags, pilot_flags) in cases.items():
            results[name] = run_case(name, flags, pilot_flags, work, config)
            show(name, results[name])
    save_json(results, RESULTS / f"estimate_error{'-' + '-'.join(args.only) if args.only else ''}.json")
    covered = sum(row["covered"] for case in results.values() for row in case["figures"].values())
    checked = sum(len(case["figures"]) for case in results.values())
    figures: dict[str, Any] = {"cases": len(results), "covered": f"{covered}/{checked}"}
    for name, case in results.items():
        for figure in ("calls", "dollars"):
            figures[f"{name}_{figure}_err"] = f"{case['figures'][figure]['error']:+.3f}"
    print_result(figures)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="also measure the embedded local model (slow)")
    parser.add_argument("--keep", metavar="DIR", help="keep the pilot and run folders in DIR (must not hold them yet)")
    parser.add_argument("--only", nargs="+", metavar="CASE", help="run only these cases (names as in RESULT)")
    run(parser.parse_args())
