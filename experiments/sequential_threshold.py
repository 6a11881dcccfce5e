"""A threshold audit that stops when the answer is known (`--stop-when accuracy>=A`): how much sooner it
stops when it reads each bound alone (what its one-sided call needs) than when it reads the joint interval,
and whether the calls stay right. Monte Carlo with known truth.

    python experiments/sequential_threshold.py          # 1,000 repetitions per setting
    python experiments/sequential_threshold.py --quick  # 60 repetitions, for a test

Truth as in experiments/sequential_exam.py: 200 clusters x 5 units, accuracy drawn in [0.5, 0.9], cluster
accuracies from a Beta with intraclass correlation 0.3 or 0.7, clusters asked in a random order; the 95 %
sequence of examiner.stats.sequential with the planned bets, read with sides="joint" (the interval the
rule read before) and sides="each" (each bound alone at 95 %, what `--stop-when accuracy>=A` reads now).
The rule stops at the first cluster where the lower bound is at least A ("at least A") or the upper bound
is below A ("below A"). Three thresholds on the same sequences:

- A = the drawn mean − 0.05 (an audit the population passes by about 0.05): clusters saved against the
  full exam, median and 90th percentile (the saving 90 % of audits reach).
- A = the population's own accuracy (the truth is at least A): a "below A" call is wrong.
- A = the population's accuracy + half a unit's share (the truth is below A): an "at least A" call is wrong.

RESULT: threshold_saved_median, threshold_saved_p90 (each bound alone, the lower of the two intraclass
correlations), threshold_error_below, threshold_error_above (the higher of the two), and the same four
with the joint interval (suffix _joint).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from examiner.stats.sequential import SIDES, confidence_sequence
from finish import RESULTS, print_result, save_json
from sequential_exam import CLUSTERS, UNITS, cluster_accuracies

ALPHA, GAP, ICCS = 0.05, 0.05, (0.3, 0.7)


def call(lower: np.ndarray, upper: np.ndarray, threshold: float) -> tuple[int, str]:
    """Clusters asked when the rule is met (all when never) and the call: "at least", "below" or "none"."""
    met = (lower >= threshold) | (upper < threshold)
    if not met.any():
        return lower.size, "none"
    k = int(np.argmax(met))
    return k + 1, "at least" if lower[k] >= threshold else "below"


def setting(icc: float, reps: int) -> dict[str, Any]:
    rng = np.random.default_rng([41, 7, int(icc * 10)])
    sizes = np.full(CLUSTERS, float(UNITS))
    asked: dict[str, list[int]] = {sides: [] for sides in SIDES}
    wrong_below = dict.fromkeys(SIDES, 0)
    wrong_above = dict.fromkeys(SIDES, 0)
    for _ in range(reps):
        mean = rng.uniform(0.5, 0.9)
        correct = rng.binomial(UNITS, cluster_accuracies(rng, mean, icc)).astype(float)
        truth = correct.sum() / sizes.sum()
        for sides in SIDES:
            seq = confidence_sequence(correct, sizes, sizes, alpha=ALPHA, sides=sides)
            asked[sides].append(call(seq.lower, seq.upper, mean - GAP)[0])
            wrong_below[sides] += call(seq.lower, seq.upper, truth)[1] == "below"
            wrong_above[sides] += call(seq.lower, seq.upper, truth + 0.5 / sizes.sum())[1] == "at least"
    row: dict[str, Any] = {"icc": icc}
    for sides in SIDES:
        saved = 1 - np.array(asked[sides]) / CLUSTERS
        row[sides] = {"calls_saved_median": float(np.median(saved)), "calls_saved_p90": float(np.percentile(saved, 10)),
                      "clusters_asked_median": float(np.median(asked[sides])),
                      "error_below": wrong_below[sides] / reps, "error_above": wrong_above[sides] / reps}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 repetitions per setting (a smoke test)")
    parser.add_argument("--workers", type=int, default=1, help="settings run in parallel processes (default 1)")
    args = parser.parse_args()
    reps = 60 if args.quick else 1000
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        rows = list(pool.map(setting, ICCS, [reps] * len(ICCS)))
    save_json({"repetitions": reps, "settings": rows},
              RESULTS / ("sequential_threshold_quick.json" if reps < 1000 else "sequential_threshold.json"))
    figures: dict[str, str] = {}
    for sides, suffix in (("each", ""), ("joint", "_joint")):
        figures[f"threshold_saved_median{suffix}"] = f"{min(r[sides]['calls_saved_median'] for r in rows):.3f}"
        figures[f"threshold_saved_p90{suffix}"] = f"{min(r[sides]['calls_saved_p90'] for r in rows):.3f}"
        figures[f"threshold_error_below{suffix}"] = f"{max(r[sides]['error_below'] for r in rows):.3f}"
        figures[f"threshold_error_above{suffix}"] = f"{max(r[sides]['error_above'] for r in rows):.3f}"
    print_result(figures)


if __name__ == "__main__":
    main()
