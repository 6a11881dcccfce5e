"""How few human labels can the report's calibrated accuracy (PPI++) use? Monte Carlo with known truth.

    python experiments/ppi_small_samples.py     # about 2.5 CPU minutes; figures in experiments/results/ppi_small_samples.json

Why: the exam report's "Calibrated by people" section (examiner/reporting/calibration_section.py) gives
the PPI++ figure only from MIN_LABELS labelled units per target on. Truth: N units, each correct with
probability p; a judge that passes 30 % of wrong answers and fails 5 % of right ones (the judge of
experiments/stats_calibration.py); n units drawn at random get their true label. The estimand is the
accuracy over the N units. For each (p, N, n): coverage of the 95 % PPI++ interval and of the human-only
Wilson interval, and the mean width of the first over the second, 2,000 replications (seed 2).

The RESULT line: min_coverage_at_20 (the lowest PPI++ coverage at n = 20 over the settings),
max_width_ratio_at_20 (its widest interval relative to the people's own), max_width_ratio_at_10.
"""

from __future__ import annotations

import warnings

import numpy as np

from examiner.stats.ppi import calibrated_accuracy
from finish import RESULTS, print_result, save_json

SETTINGS = ((0.95, 500), (0.5, 500), (0.7, 100), (0.95, 100))
SIZES = (10, 20, 30, 50)
REPLICATIONS = 2000


def main() -> None:
    warnings.filterwarnings("ignore")  # statsmodels' kappa on an all-agreeing small sample
    rng = np.random.default_rng(2)
    rows = []
    for p, big_n in SETTINGS:
        for n in SIZES:
            cov = cov_h = used = 0
            width = width_h = 0.0
            for _ in range(REPLICATIONS):
                truth = rng.random(big_n) < p
                judge = np.where(truth, rng.random(big_n) >= 0.05, rng.random(big_n) < 0.30).astype(int)
                human: list[int | None] = [None] * big_n
                for i in rng.choice(big_n, n, replace=False):
                    human[i] = int(truth[i])
                try:
                    r = calibrated_accuracy(list(judge), human)
                except ValueError:
                    continue
                used += 1
                t = truth.mean()
                cov += r.ppi.low <= t <= r.ppi.high
                cov_h += r.human_only.low <= t <= r.human_only.high
                width += r.ppi.high - r.ppi.low
                width_h += r.human_only.high - r.human_only.low
            row = {"p": p, "N": big_n, "n": n, "ppi_coverage": cov / used, "human_coverage": cov_h / used,
                   "width_ratio": width / width_h, "replications": used}
            rows.append(row)
            print(f"p={p} N={big_n} n={n} ppi_coverage={row['ppi_coverage']:.3f} "
                  f"human_coverage={row['human_coverage']:.3f} width_ratio={row['width_ratio']:.3f}", flush=True)
    save_json(rows, RESULTS / "ppi_small_samples.json")
    at = {n: [r for r in rows if r["n"] == n] for n in SIZES}
    print_result({"min_coverage_at_20": f"{min(r['ppi_coverage'] for r in at[20]):.3f}",
                  "max_width_ratio_at_20": f"{max(r['width_ratio'] for r in at[20]):.3f}",
                  "max_width_ratio_at_10": f"{max(r['width_ratio'] for r in at[10]):.3f}"})


if __name__ == "__main__":
    main()
