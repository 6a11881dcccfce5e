"""How many of `examiner estimate`'s pilot calls the run reuses when both share one `--cache` (issue 29).

For each case, `examiner estimate` runs its pilot with `--cache DIR`, then `examiner run` with the same
flags and the same `--cache DIR`. A pilot call counts as reused when the run's ledger has a cache hit for
its reply (a hit carries the request id of the reply it reuses: examiner.llm.ledger.reused). The share reused is
reused / pilot calls (the pilot's paid calls); the run's own figures (calls, calls served from the cache)
are printed beside it, and the estimate's figures (with their 90 % range) beside what the run made.

    python experiments/estimate_reuse.py                # simulator: harbor-water and examiner-handbook
    python experiments/estimate_reuse.py --local        # adds the embedded SmolLM2 model (llama.cpp; minutes)
    python experiments/estimate_reuse.py --pilot-rounds 3   # a pilot that also runs later rounds

The closing line: `RESULT pilot_calls=.. reused=.. reuse_share=..` over every case run (the figures per case
in experiments/results/estimate_reuse*.json).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from finish import RESULTS, print_result, save_json

from examiner.cli.main import main
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.llm.ledger import answered, reused

SIM_CASES: dict[str, list[str]] = {
    "sim_harbor": ["corpora/harbor-water", "--simulate"],
    "sim_handbook": ["corpora/examiner-handbook", "--simulate"],
}
"""Case -> flags of both `estimate` and `run`."""
HANDBOOK3 = [f"corpora/examiner-handbook/{name}.md" for name in ("01-exam", "02-clustering", "03-judging")]
LOCAL_CASES: dict[str, list[str]] = {"local_handbook3": [*HANDBOOK3, "--max-rounds", "2"]}
"""The embedded model on three handbook files (as experiments/estimate_error.py), at most 2 rounds."""


def write_config(folder: Path) -> Path:
    """The embedded model as the only endpoint (the simulator cases ignore it: --simulate)."""
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"local": {
        "provider": "local", "model": "smollm2-135m-instruct", "max_concurrency": 1, "supports_n": False,
        "structured_output": "json_object_schema", "price_input_per_1m": 0.15, "price_output_per_1m": 0.60,
    }}}), encoding="utf-8")
    return config


def local_available() -> bool:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def reuse(pilot_dir: Path, run_dir: Path) -> dict[str, Any]:
    """Pilot calls (paid), run calls (answered), the run's cache hits, and the pilot calls among them."""
    pilot_ledger, run_ledger = RunDir(pilot_dir).ledger_records(), RunDir(run_dir).ledger_records()
    pilot = [r for r in answered(pilot_ledger) if not r.cache_hit]
    run = answered(run_ledger)
    again = reused(pilot_ledger, run_ledger)
    missed = Counter((str(r.stage), r.round) for r in pilot) - Counter((str(r.stage), r.round) for r in again)
    return {"pilot_calls": len(pilot), "run_calls": len(run), "run_cache_hits": sum(1 for r in run if r.cache_hit),
            "reused": len(again), "reuse_share": len(again) / len(pilot) if pilot else 0.0,
            "not_reused_by_stage": {f"{stage} r{rnd}": n for (stage, rnd), n in sorted(missed.items(), key=str)}}


def predicted_vs_run(estimate: dict[str, Any], run_dir: Path) -> dict[str, dict[str, Any]]:
    """The estimate's central figure and range beside what the run made: every answered call (those the
    cache served included, as the estimate counts them), tokens, rounds and clusters."""
    records = answered(RunDir(run_dir).ledger_records())
    info = RunDir(run_dir).read_info()
    truth = {"calls": len(records), "prompt_tokens": sum(r.prompt_tokens for r in records),
             "completion_tokens": sum(r.completion_tokens for r in records),
             "rounds": len({r.round for r in info.rounds}), "clusters": sum(r.clusters for r in info.rounds)}
    guess = {**{k: estimate["total"][k] for k in ("calls", "prompt_tokens", "completion_tokens")},
             "rounds": estimate["rounds"], "clusters": estimate["clusters"]}
    return {k: {"actual": v, "predicted": guess[k]["value"], "low": guess[k]["low"], "high": guess[k]["high"],
                "covered": guess[k]["low"] <= v <= guess[k]["high"]} for k, v in truth.items()}


def run_case(name: str, flags: list[str], pilot_flags: list[str], work: Path, config: Path) -> dict[str, Any]:
    pilot, full, cache = work / f"{name}-pilot", work / f"{name}-run", work / f"{name}-cache"
    shared = ["--config", str(config), "--cache", str(cache), "--quiet"]
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["estimate", *flags, *pilot_flags, *shared, "--out", str(pilot), "--json"]) == 0
    estimate_s = time.perf_counter() - started
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", *flags, *shared, "--out", str(full)]) in (0, 3)
    run_s = time.perf_counter() - started
    estimate = json.loads((pilot / rundir.ESTIMATE).read_text())
    return {"flags": flags, "pilot_flags": pilot_flags, "pilot_units": estimate["pilot_units"],
            "units": estimate["units"], "pilot_rounds": estimate["pilot_rounds"],
            "estimate_s": round(estimate_s, 1), "run_s": round(run_s, 1), **reuse(pilot, full),
            "estimate_vs_run": predicted_vs_run(estimate, full), "notes": estimate["notes"]}


def run(args: argparse.Namespace) -> None:
    cases = dict(SIM_CASES)
    if args.local:
        if local_available():
            cases.update(LOCAL_CASES)
        else:
            print("--local skipped: llama-cpp-python is not installed (pip install 'examiner[local]')")
    pilot_flags = ["--pilot-rounds", str(args.pilot_rounds)]
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="estimate-reuse-") as scratch:
        work = Path(args.keep or scratch)
        work.mkdir(parents=True, exist_ok=True)
        config = write_config(work)
        for name, flags in cases.items():
            case = run_case(name, flags, pilot_flags, work, config)
            results[name] = case
            print(f"{name}: pilot {case['pilot_units']} of {case['units']} units, {case['pilot_rounds']} round(s), "
                  f"{case['pilot_calls']} calls; run {case['run_calls']} calls, {case['run_cache_hits']} served from "
                  f"the cache, {case['reused']} of them the pilot's (share {case['reuse_share']:.3f}); "
                  f"estimate {case['estimate_s']} s, run {case['run_s']} s")
            for figure, row in case["estimate_vs_run"].items():
                print(f"  {figure:18} run {row['actual']:>8,}  estimate {row['predicted']:>10,.0f} "
                      f"[{row['low']:,.0f}, {row['high']:,.0f}]  {'covered' if row['covered'] else 'MISSED'}")
            if case["not_reused_by_stage"]:
                print(f"  pilot calls not reused, by stage and round: {case['not_reused_by_stage']}")
    suffix = "-local" if args.local else ""
    suffix += f"-rounds{args.pilot_rounds}" if args.pilot_rounds != 1 else ""
    save_json(results, RESULTS / f"estimate_reuse{suffix}.json")
    pilot_calls = sum(c["pilot_calls"] for c in results.values())
    reused = sum(c["reused"] for c in results.values())
    covered = sum(row["covered"] for c in results.values() for row in c["estimate_vs_run"].values())
    checked = sum(len(c["estimate_vs_run"]) for c in results.values())
    figures = {"cases": len(results), "estimate_covered": f"{covered}/{checked}", **{f"{name}_share": f"{c['reuse_share']:.3f}" for name, c in results.items()},
               "pilot_calls": pilot_calls, "reused": reused,
               "reuse_share": f"{reused / pilot_calls:.3f}" if pilot_calls else "nan"}
    print_result(figures)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="also measure the embedded local model (slow)")
    parser.add_argument("--pilot-rounds", type=int, default=1, metavar="N", help="estimate --pilot-rounds (default 1)")
    parser.add_argument("--keep", metavar="DIR", help="keep the pilot, run and cache folders in DIR")
    run(parser.parse_args())
