"""Stopping an exam when the answer is known: does the anytime-valid sequence hold at the stop, what does
peeking at a fixed-n interval cost, and how many calls does stopping save? Monte Carlo with known truth.

    python experiments/sequential_exam.py          # 1,000 repetitions per setting (a few CPU minutes)
    python experiments/sequential_exam.py --quick  # 60 repetitions, for a test

Truth: a population of 200 clusters x 5 units; each repetition draws the accuracy uniformly in [0.5, 0.9],
each cluster's accuracy from a Beta of that mean with intraclass correlation 0.3 or 0.7, and each unit's
verdict from its cluster's accuracy; the estimand is the accuracy of these 1,000 units (the finite
population the exam asks). Clusters are asked in a random order.

- Width rule (`--stop-when width<=0.10`): stop at the first cluster after which the 95 % confidence
  sequence (examiner.stats.sequential) is at most 0.10 wide; coverage of the truth there, and the share of
  clusters (so of target + judge calls: every cluster here costs the same calls) left unasked against the
  full exam, median and 90th percentile over repetitions. Beside it, the peeking user: a fixed-n 95 %
  interval (estimate +- 1.96 cluster-robust standard errors, as a fixed-size report prints), watched from
  the 10th cluster on and stopped at the first moment it is at most 0.10 wide.
- Sequential gate (margin M = 0.05, alpha = 0.05, intraclass correlation 0.3, base accuracy in
  [0.5, 0.9]): the new target's cluster accuracies are the base's moved so their mean moves by exactly d,
  and each unit is right for both targets through one shared uniform draw (paired verdicts). Error rate at
  d = 0 (declared "worse" while the drawn population's difference is above −M) and at d = −M (declared
  "not worse" or "equivalent" while it is at or below −M), over all repetitions; calls saved against the
  fixed-size gate (the whole exam, both targets) at d = +2M and d = −2M, the smaller of the two medians.

The RESULT line: coverage_at_stop (the lower of the two intraclass correlations), naive_peeking_coverage
(the same), calls_saved_median and calls_saved_p90 (the lower of the two; the p90 is the saving that 90 %
of the exams reach or beat, so it is the 10th percentile of the saving), gate_error_null,
gate_error_margin, gate_calls_saved.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from examiner.stats.sequential import confidence_sequence, sequential_gate
from finish import RESULTS, print_result, save_json

CLUSTERS, UNITS, WIDTH, MARGIN, ALPHA, FIRST_LOOK = 200, 5, 0.10, 0.05, 0.05, 10


def cluster_accuracies(rng: np.random.Generator, mean: float, icc: float) -> np.ndarray:
    """Cluster accuracies with the given mean whose units have intraclass correlation `icc`."""
    spread = (1 - icc) / icc
    return rng.beta(mean * spread, (1 - mean) * spread, size=CLUSTERS)


def naive_stop(scores: np.ndarray) -> tuple[int, float, float]:
    """The peeking user's stop: first t >= FIRST_LOOK where estimate +- 1.96 cluster-robust SE is <= WIDTH wide."""
    t = np.arange(1, scores.size + 1, dtype=float)
    mean = np.cumsum(scores) / t
    second = np.cumsum(scores**2) / t
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(np.maximum(second - mean**2, 0.0) * t / (t - 1) / t)
    width = 2 * 1.96 * se
    ok = (t >= FIRST_LOOK) & (width <= WIDTH)
    k = int(np.argmax(ok)) if ok.any() else scores.size - 1
    return k + 1, float(mean[k] - width[k] / 2), float(mean[k] + width[k] / 2)


def width_rule(rng: np.random.Generator, icc: float, reps: int) -> dict[str, float]:
    sizes = np.full(CLUSTERS, float(UNITS))
    hits = naive_hits = 0
    asked = []
    for _ in range(reps):
        correct = rng.binomial(UNITS, cluster_accuracies(rng, rng.uniform(0.5, 0.9), icc)).astype(float)
        truth = correct.sum() / sizes.sum()
        seq = confidence_sequence(correct, sizes, sizes, alpha=ALPHA)
        narrow = seq.width <= WIDTH + 1e-12
        k = int(np.argmax(narrow)) if narrow.any() else CLUSTERS - 1
        hits += bool(seq.lower[k] <= truth <= seq.upper[k])
        asked.append(k + 1)
        _, lo, hi = naive_stop(correct / UNITS)
        naive_hits += bool(lo <= truth <= hi)
    saved = 1 - np.array(asked) / CLUSTERS
    return {"icc": icc, "coverage_at_stop": hits / reps, "naive_peeking_coverage": naive_hits / reps,
            "calls_saved_median": float(np.median(saved)), "calls_saved_p90": float(np.percentile(saved, 10)),
            "clusters_asked_median": float(np.median(asked))}


def moved(base: np.ndarray, d: float, mean: float) -> np.ndarray:
    """Cluster accuracies whose mean is `mean` + d when `base`'s mean is `mean`, each kept within [0, 1]."""
    return base + d * (1 - base) / (1 - mean) if d >= 0 else base * (1 + d / mean)


def gate_rule(rng: np.random.Generator, d: float, reps: int) -> dict[str, float]:
    sizes = np.full(CLUSTERS, float(UNITS))
    outcomes: dict[str, int] = {}
    wrong = 0
    asked = []
    for _ in range(reps):
        mean = rng.uniform(0.5, 0.9)
        p = cluster_accuracies(rng, mean, 0.3)
        q = moved(p, d, mean)
        draw = rng.random((CLUSTERS, UNITS))
        base = (draw < p[:, None]).sum(axis=1).astype(float)
        new = (draw < q[:, None]).sum(axis=1).astype(float)
        decision = sequential_gate(new, base, sizes, sizes, margin=MARGIN, alpha=ALPHA)
        outcomes[decision.outcome] = outcomes.get(decision.outcome, 0) + 1
        truth = (new.sum() - base.sum()) / sizes.sum()
        wrong += (decision.outcome == "worse" and truth > -MARGIN) or (
            decision.outcome in ("not worse", "equivalent") and truth <= -MARGIN)
        asked.append(decision.clusters)
    saved = 1 - np.array(asked) / CLUSTERS
    return {"difference": d, **{k: v / reps for k, v in sorted(outcomes.items())}, "error": wrong / reps,
            "calls_saved_median": float(np.median(saved)), "clusters_asked_median": float(np.median(asked))}


TASKS: tuple[tuple[str, float], ...] = (("width", 0.3), ("width", 0.7), ("gate", 0.0), ("gate", -MARGIN),
                                         ("gate", 2 * MARGIN), ("gate", -2 * MARGIN))
"""Each setting with its own seeded generator (seed 41, task index), so they run in parallel processes."""


def task(index: int, reps: int) -> dict[str, Any]:
    kind, value = TASKS[index]
    rng = np.random.default_rng([41, index])
    return width_rule(rng, value, reps) if kind == "width" else gate_rule(rng, value, reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 repetitions per setting (a smoke test)")
    parser.add_argument("--workers", type=int, default=1, help="settings run in parallel processes (default 1)")
    args = parser.parse_args()
    reps = 60 if args.quick else 1000
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        rows = list(pool.map(task, range(len(TASKS)), [reps] * len(TASKS)))
    width = rows[:2]
    gate = {TASKS[i][1]: rows[i] for i in range(2, len(TASKS))}
    save_json({"repetitions": reps, "width_rule": width, "gate": list(gate.values())},
              RESULTS / ("sequential_exam_quick.json" if reps < 1000 else "sequential_exam.json"))
    print_result({
        "coverage_at_stop": f"{min(w['coverage_at_stop'] for w in width):.3f}",
        "naive_peeking_coverage": f"{min(w['naive_peeking_coverage'] for w in width):.3f}",
        "calls_saved_median": f"{min(w['calls_saved_median'] for w in width):.3f}",
        "calls_saved_p90": f"{min(w['calls_saved_p90'] for w in width):.3f}",
        "gate_error_null": f"{gate[0.0]['error']:.3f}",
        "gate_error_margin": f"{gate[-MARGIN]['error']:.3f}",
        "gate_calls_saved": f"{min(gate[2 * MARGIN]['calls_saved_median'], gate[-2 * MARGIN]['calls_saved_median']):.3f}",
    })


if __name__ == "__main__":
    main()
