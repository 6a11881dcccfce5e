"""Does a cascade of a cheap and a strong judge keep its promise, and what does it save? Monte Carlo with
simulated judges of known quality (issue 30, acceptance; issue 40, item 6: the promise scored as the rate
it is).

    python experiments/judge_cascade.py            # 1,000 repetitions per case
    python experiments/judge_cascade.py --quick    # 50 repetitions, for a look

The promise (examiner.stats.cascade, risk-controlled): with probability at least 1 - risk over the draw of
the calibration sample, the cheap judge's disagreement RATE on the population's units its threshold keeps
is at most 1 - target. The population rate at a threshold is measured on a fresh draw of POPULATION
units of the same judge (Monte Carlo error about 0.0003). The realised share of one exam's kept units
scatters around that rate, so it falls below the target more often than `risk`; the experiment prints
that failure rate beside the promised one, for honesty, but does not score it.

Each repetition: N units with a reference (strong judge) label among three (correct / incorrect /
unrelated); a cheap judge (examiner.simulator.judge_quality) that agrees with the strong judge on a share
`agreement` of units, with a per-unit chance drawn from a Beta distribution; a random calibration sample
of n units judged by both; the threshold from examiner.stats.cascade (fixed-sequence testing, target
agreement 0.9, risk 0.1); the other units routed: the cheap verdict stands where its confidence reaches
the threshold, the rest escalate to the strong judge. Calibration units keep the strong judge's verdict
(it was paid for). Spend counts the cheap judge on every unit (k calls per unit when confidence comes from
k samples) and the strong judge on the calibration and escalated units, against the strong judge on all.

Cases (the cheap judge's confidence): calibrated (its log-probability tells its chance), overconfident
(noisy and always above 0.9), uninformative (random), and k = 5 samples (per-sample agreement as given;
their majority agrees more often).

The RESULT line: rate_failure (share of calibrations whose population disagreement rate above the
threshold exceeds 1 - target: the promise says at most `risk`; calibrated case), realised_failure (share
whose realised agreement on the exam's kept units fell below the target: not promised, shown for
honesty), cheap_share (units settled by the cheap judge), spend_ratio (cascade spend over strong-only
spend), overall_agreement (all units' final verdicts against the strong judge), and the miscalibrated
(overconfident) case's rate_failure and cheap share.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from finish import RESULTS, print_result, save_json

from examiner.simulator.judge_quality import JudgeQuality, simulate_judge
from examiner.stats.cascade import calibrate_threshold, route

UNITS = 10_000
CALIBRATION = 800
"""8 % of the units labelled by both judges; a smaller exam pays a larger share for its calibration (the
`smaller exam` line: 4,000 units, 400 calibrated)."""
TARGET = 0.9
RISK = 0.1
CHEAP_AGREEMENT = 0.85
PRICE_RATIO = 1 / 20
"""Cheap judge's cost per unit over the strong judge's (gpt-4o-mini against gpt-4o list prices: 1/16.7 for
input, 1/16.7 for output; a local model costs nothing)."""
LABELS = 3
POPULATION = 2_000_000
"""Fresh units per case on which a threshold's population disagreement rate is measured."""


class Population:
    """A large fresh draw of the judge's units, sorted by confidence: the disagreement rate among the units
    a threshold keeps, in the population the calibration samples come from."""

    def __init__(self, rng: np.random.Generator, quality: JudgeQuality) -> None:
        reference = rng.integers(0, LABELS, POPULATION)
        judged = simulate_judge(reference, quality, LABELS, rng)
        order = np.argsort(judged.confidences)
        self.confidences = judged.confidences[order]
        self.wrong_above = np.cumsum((~judged.agrees[order])[::-1])  # disagreements among the top k+1

    def rate(self, threshold: float) -> float:
        """Disagreement rate among units with confidence >= threshold (nan when none is kept)."""
        kept = len(self.confidences) - int(np.searchsorted(self.confidences, threshold, side="left"))
        return float(self.wrong_above[kept - 1] / kept) if kept else float("nan")


def repetition(rng: np.random.Generator, quality: JudgeQuality, population: Population, *, units: int,
               calibration: int, price_ratio: float) -> dict[str, float]:
    reference = rng.integers(0, LABELS, units)
    cheap = simulate_judge(reference, quality, LABELS, rng)
    order = rng.permutation(units)
    sample, rest = order[:calibration], order[calibration:]
    threshold = calibrate_threshold(cheap.confidences[sample], cheap.agrees[sample], target_agreement=TARGET,
                                    risk=RISK)
    kept = route(cheap.confidences[rest], threshold)
    kept_agrees = cheap.agrees[rest][kept]
    calls_per_unit = quality.samples if quality.calibration == "samples" else 1
    cheap_spend = units * calls_per_unit * price_ratio
    strong_spend = calibration + int((~kept).sum())
    rate = population.rate(threshold.threshold) if threshold.keeps_any else float("nan")
    return {
        "kept_agreement": float(kept_agrees.mean()) if kept_agrees.size else float("nan"),
        "population_disagreement": rate,
        "rate_failed": float(threshold.keeps_any and rate > 1 - TARGET),
        "realised_failed": float(kept_agrees.size > 0 and kept_agrees.mean() < TARGET),
        "cheap_share": float(kept.sum() / units),
        "spend_ratio": (cheap_spend + strong_spend) / units,
        "overall_agreement": float((kept_agrees.sum() + (~kept).sum() + calibration) / units),
        "raw_agreement": float(cheap.agrees.mean()),
    }


def run_case(rng: np.random.Generator, quality: JudgeQuality, reps: int, **settings: Any) -> dict[str, Any]:
    population = Population(rng, quality)
    rows = [repetition(rng, quality, population, **settings) for _ in range(reps)]
    mean = {key: float(np.nanmean([r[key] for r in rows])) if any(np.isfinite(r[key]) for r in rows) else None
            for key in rows[0]}
    return {"calibration": quality.calibration, "agreement": quality.agreement, "reps": reps,
            "rate_failure": mean.pop("rate_failed"), "realised_failure": mean.pop("realised_failed"), **mean}


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 repetitions (a look, not the figures)")
    parser.add_argument("--reps", type=int, default=1000, help="repetitions per case (default 1000)")
    parser.add_argument("--seed", type=int, default=2030)
    args = parser.parse_args()
    reps = 50 if args.quick else args.reps
    rng = np.random.default_rng(args.seed)
    started = time.time()
    settings = {"units": UNITS, "calibration": CALIBRATION, "price_ratio": PRICE_RATIO}
    cases = {}
    for calibration in ("calibrated", "overconfident", "uninformative", "samples"):
        case = run_case(rng, JudgeQuality(CHEAP_AGREEMENT, calibration), reps, **settings)
        cases[calibration] = case
        print(f"{calibration:>13}: rate above 1-target in {case['rate_failure']:.3f} of calibrations (promised <= "
              f"{RISK}; realised share below target in {case['realised_failure']:.3f}), cheap settles "
              f"{case['cheap_share']:.3f}, spend {case['spend_ratio']:.3f} of strong-only, agreement kept "
              f"{_f(case['kept_agreement'])} / overall {case['overall_agreement']:.3f} (cheap raw "
              f"{case['raw_agreement']:.3f})", flush=True)
    local = run_case(rng, JudgeQuality(CHEAP_AGREEMENT, "calibrated"), reps, **{**settings, "price_ratio": 0.0})
    print(f"calibrated, cheap judge free (a local model): spend {local['spend_ratio']:.3f} of strong-only", flush=True)
    small = run_case(rng, JudgeQuality(CHEAP_AGREEMENT, "calibrated"), reps,
                     **{**settings, "units": 4000, "calibration": 400})
    print(f"calibrated, smaller exam (4,000 units, 400 calibrated): rate above 1-target in {small['rate_failure']:.3f} "
          f"(realised share below target in {small['realised_failure']:.3f}), cheap settles "
          f"{small['cheap_share']:.3f}, spend {small['spend_ratio']:.3f} of strong-only", flush=True)
    tiny = run_case(rng, JudgeQuality(CHEAP_AGREEMENT, "calibrated"), reps,
                    **{**settings, "units": 1000, "calibration": 300})
    print(f"calibrated, small exam (1,000 units, 300 calibrated): rate above 1-target in {tiny['rate_failure']:.3f} "
          f"(realised share below target in {tiny['realised_failure']:.3f}: fewer kept units, more scatter), "
          f"cheap settles {tiny['cheap_share']:.3f}", flush=True)
    main_case, bad = cases["calibrated"], cases["overconfident"]
    figures = {
        "rate_failure": f"{main_case['rate_failure']:.3f}",
        "realised_failure": f"{main_case['realised_failure']:.3f}",
        "small_rate_failure": f"{small['rate_failure']:.3f}",
        "small_realised_failure": f"{small['realised_failure']:.3f}",
        "tiny_rate_failure": f"{tiny['rate_failure']:.3f}",
        "tiny_realised_failure": f"{tiny['realised_failure']:.3f}",
        "cheap_share": f"{main_case['cheap_share']:.3f}",
        "spend_ratio": f"{main_case['spend_ratio']:.3f}",
        "overall_agreement": f"{main_case['overall_agreement']:.3f}",
        "miscalibrated_rate_failure": f"{bad['rate_failure']:.3f}",
        "miscalibrated_cheap_share": f"{bad['cheap_share']:.3f}",
    }
    save_json({"settings": {**settings, "target": TARGET, "risk": RISK, "cheap_agreement": CHEAP_AGREEMENT,
                            "reps": reps, "seed": args.seed, "population": POPULATION},
               "cases": cases, "free_cheap_judge": local, "smaller_exam": small, "small_exam": tiny, "seconds": round(time.time() - started, 1),
               "result": figures},
              RESULTS / ("judge_cascade-quick.json" if args.quick else "judge_cascade.json"))
    print_result(figures)


if __name__ == "__main__":
    main()
