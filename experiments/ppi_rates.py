"""How well the people-calibrated abstention and hallucination rates cover the truth: PPI++ of the 0/1
abstained labels (examiner.stats.ppi.calibrated_accuracy on that indicator, as the exam report computes it)
and PPI++ for the ratio incorrect / attempted (examiner.stats.ppi_ratio), on simulated judged units with
known label shares and a judge that is right on a share of them (else another label at random) or one that
calls declined answers incorrect (a biased judge).

Each setting draws REPS populations of N judged units (true shares: 50 % correct, 30 % incorrect, 20 %
abstained: hallucination 0.375, abstention 0.2), a simple random sample of n for people to label with the
truth, and records whether each 95 % interval covers the true rate, the estimate's mean error and the
interval's mean width. The RESULT line: the lowest coverage of each rate over the settings with n >= 20,
and the largest |mean error| of the hallucination rate.

Usage: python experiments/ppi_rates.py [--reps 1000]
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable

import numpy as np

from finish import RESULTS, print_result, save_json

from examiner.stats.ppi import calibrated_accuracy
from examiner.stats.ppi_ratio import ppi_ratio

SHARES = np.array([0.5, 0.3, 0.2])
TRUE_HALLUCINATION = 0.3 / 0.8
TRUE_ABSTENTION = 0.2
Judge = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def noisy(right: float) -> Judge:
    def judge(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.where(rng.random(truth.size) < right, truth, (truth + rng.integers(1, 3, size=truth.size)) % 3)
    return judge


def inventing(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Calls 60 % of declined answers incorrect (and is otherwise right)."""
    return np.where((truth == 2) & (rng.random(truth.size) < 0.6), 1, truth)


SETTINGS: list[tuple[str, int, int, Judge]] = [
    ("judge right 80 %", 20, 400, noisy(0.8)),
    ("judge right 80 %", 50, 400, noisy(0.8)),
    ("judge right 80 %", 100, 800, noisy(0.8)),
    ("judge right 95 %", 40, 400, noisy(0.95)),
    ("judge right 60 %", 300, 1000, noisy(0.6)),
    ("judge calls 60 % of declines incorrect", 30, 500, inventing),
]


def _pairs(labels: np.ndarray) -> list[tuple[int, int]]:
    return [(int(x == 1), int(x < 2)) for x in labels]


def run(reps: int, seed: int = 0) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    rows = []
    for name, n, big_n, judge_of in SETTINGS:
        covered = {"hallucination": 0, "abstention": 0}
        errors: dict[str, list[float]] = {"hallucination": [], "abstention": []}
        widths: dict[str, list[float]] = {"hallucination": [], "abstention": []}
        for _ in range(reps):
            truth = rng.choice(3, size=big_n, p=SHARES)
            judge = judge_of(truth, rng)
            labelled = np.zeros(big_n, bool)
            labelled[rng.choice(big_n, size=n, replace=False)] = True
            h, _ = ppi_ratio(_pairs(truth[labelled]), _pairs(judge[labelled]), _pairs(judge[~labelled]))
            a = calibrated_accuracy([int(x == 2) for x in judge],
                                    [int(t == 2) if m else None for t, m in zip(truth, labelled)]).ppi
            for key, est, true in (("hallucination", h, TRUE_HALLUCINATION), ("abstention", a, TRUE_ABSTENTION)):
                covered[key] += est.low <= true <= est.high
                errors[key].append(est.estimate - true)
                widths[key].append(est.high - est.low)
        rows.append({"judge": name, "labelled": n, "units": big_n, "reps": reps,
                     **{f"{k}_coverage": covered[k] / reps for k in covered},
                     **{f"{k}_mean_error": float(np.mean(errors[k])) for k in errors},
                     **{f"{k}_mean_width": float(np.mean(widths[k])) for k in widths}})
        print(f"{name:40s} n={n:4d} N={big_n:5d}  hallucination cover {covered['hallucination'] / reps:.3f} "
              f"error {np.mean(errors['hallucination']):+.4f} width {np.mean(widths['hallucination']):.3f} | "
              f"abstention cover {covered['abstention'] / reps:.3f} error {np.mean(errors['abstention']):+.4f}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=RuntimeWarning)  # statsmodels' kappa on a sample of one label
    rows = run(args.reps)
    save_json(rows, RESULTS / "ppi_rates.json")
    print_result({"min_halluc_coverage": f"{min(r['hallucination_coverage'] for r in rows):.3f}",
                  "min_abstain_coverage": f"{min(r['abstention_coverage'] for r in rows):.3f}",
                  "max_halluc_abs_error": f"{max(abs(r['hallucination_mean_error']) for r in rows):.4f}"})


if __name__ == "__main__":
    main()
