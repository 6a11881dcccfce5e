"""Does a cascade of a cheap and a strong judge keep its promised agreement, and what does it save?
Monte Carlo with simulated judges of known quality (issue 30, acceptance).

    python experiments/judge_cascade.py            # 200 repetitions per case, about 3 minutes on 2 cores
    python experiments/judge_cascade.py --quick    # 50 repetitions, for a look

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

The RESULT line: guarantee_rate (share of repetitions in which the cheap judge's kept verdicts agree with
the strong judge at least at the target; calibrated case), cheap_share (units settled by the cheap judge),
spend_ratio (cascade spend over strong-only spend), overall_agreement (all units' final verdicts against
the strong judge), and the miscalibrated (overconfident) case's guarantee rate and cheap share.
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


def repetition(rng: np.random.Generator, quality: JudgeQuality, *, units: int, calibration: int,
               price_ratio: float) -> dict[str, float]:
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
    return {
        "kept_agreement": float(kept_agrees.mean()) if kept_agrees.size else float("nan"),
        "held": float(kept_agrees.size == 0 or kept_agrees.mean() >= TARGET),
        "cheap_share": float(kept.sum() / units),
        "spend_ratio": (cheap_spend + strong_spend) / units,
        "overall_agreement": float((kept_agrees.sum() + (~kept).sum() + calibration) / units),
        "raw_agreement": float(cheap.agrees.mean()),
    }


def run_case(rng: np.random.Generator, quality: JudgeQuality, reps: int, **settings: Any) -> dict[str, Any]:
    rows = [repetition(rng, quality, **settings) for _ in range(reps)]
    mean = {key: float(np.nanmean([r[key] for r in rows])) for key in rows[0]}
    return {"calibration": quality.calibration, "agreement": quality.agreement, "reps": reps,
            "guarantee_rate": mean.pop("held"), **mean}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 repetitions (a look, not the figures)")
    parser.add_argument("--seed", type=int, default=2030)
    args = parser.parse_args()
    reps = 50 if args.quick else 200
    rng = np.random.default_rng(args.seed)
    started = time.time()
    settings = {"units": UNITS, "calibration": CALIBRATION, "price_ratio": PRICE_RATIO}
    cases = {}
    for calibration in ("calibrated", "overconfident", "uninformative", "samples"):
        case = run_case(rng, JudgeQuality(CHEAP_AGREEMENT, calibration), reps, **settings)
        cases[calibration] = case
        print(f"{calibration:>13}: guarantee held {case['guarantee_rate']:.3f}, cheap settles {case['cheap_share']:.3f}, "
              f"spend {case['spend_ratio']:.3f} of strong-only, agreement kept {case['kept_agreement']:.3f} / "
              f"overall {case['overall_agreement']:.3f} (cheap raw {case['raw_agreement']:.3f})", flush=True)
    local = run_case(rng, JudgeQuality(CHEAP_AGREEMENT, "calibrated"), reps, **{**settings, "price_ratio": 0.0})
    print(f"calibrated, cheap judge free (a local model): spend {local['spend_ratio']:.3f} of strong-only", flush=True)
    small = run_case(rng, JudgeQuality(CHEAP_AGREEMENT, "calibrated"), reps,
                     **{**settings, "units": 4000, "calibration": 400})
    print(f"calibrated, smaller exam (4,000 units, 400 calibrated): guarantee held {small['guarantee_rate']:.3f}, "
          f"cheap settles {small['cheap_share']:.3f}, spend {small['spend_ratio']:.3f} of strong-only", flush=True)
    main_case, bad = cases["calibrated"], cases["overconfident"]
    figures = {
        "guarantee_rate": f"{main_case['guarantee_rate']:.3f}",
        "cheap_share": f"{main_case['cheap_share']:.3f}",
        "spend_ratio": f"{main_case['spend_ratio']:.3f}",
        "overall_agreement": f"{main_case['overall_agreement']:.3f}",
        "miscalibrated_guarantee_rate": f"{bad['guarantee_rate']:.3f}",
        "miscalibrated_cheap_share": f"{bad['cheap_share']:.3f}",
    }
    save_json({"settings": {**settings, "target": TARGET, "risk": RISK, "cheap_agreement": CHEAP_AGREEMENT,
                            "reps": reps, "seed": args.seed},
               "cases": cases, "free_cheap_judge": local, "smaller_exam": small, "seconds": round(time.time() - started, 1),
               "result": figures},
              RESULTS / ("judge_cascade-quick.json" if args.quick else "judge_cascade.json"))
    print_result(figures)


if __name__ == "__main__":
    main()
