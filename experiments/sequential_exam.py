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
  full exam, median and 90th percentile over repetitions; measured for both bets the sequence offers
  (planned, the default, and the paper's plug-in) on the same draws. Beside it, what a fixed-n 95 %
  interval with the population's own cluster variance (known, with the finite-population correction)
  would need to be 0.10 wide: the saving no interval decided in advance can beat. And the peeking user: a fixed-n 95 %
  interval (estimate +- 1.96 cluster-robust standard errors, as a fixed-size report prints), watched from
  the 10th cluster on and stopped at the first moment it is at most 0.10 wide.
- Sequential gate (margin M = 0.05, alpha = 0.05, intraclass correlation 0.3, base accuracy in
  [0.5, 0.9]): the new target's cluster accuracies are the base's moved so their mean moves by exactly d,
  and each unit is right for both targets through one shared uniform draw (paired verdicts). Error rate at
  d = 0 (declared "worse" while the drawn population's difference is above −M) and at d = −M (declared
  "not worse" or "equivalent" while it is at or below −M), over all repetitions; calls saved against the
  fixed-size gate (the whole exam, both targets) at d = +2M and d = −2M, the smaller of the two medians
  (and of the two 90th percentiles); for both gate schemes (examiner.stats.sequential.GATES: one-sided,
  the default, and two-sided, the gate as first written) on the same draws, with the planned bets.

The RESULT line: coverage_at_stop (the lower of the two intraclass correlations), naive_peeking_coverage
(the same), calls_saved_median and calls_saved_p90 (the lower of the two; the p90 is the saving that 90 %
of the exams reach or beat, so it is the 10th percentile of the saving), gate_error_null,
gate_error_margin, gate_calls_saved, gate_calls_saved_p90 (all with the defaults: planned bets, one-sided
gate); then the width rule with the plug-in bets (calls_saved_median_plugin, calls_saved_p90_plugin,
coverage_at_stop_plugin), the two-sided gate (gate_error_null_two_sided, gate_error_margin_two_sided,
gate_calls_saved_two_sided) and fixed_n_saved_median and fixed_n_saved_p90 (the saving of the fixed-n
interval told the population's variance in advance, the lower of the two intraclass correlations: what a
design that knows the answer's spread before asking saves; a rule that must stay valid while it looks
after every cluster, and learns the spread as it goes, pays for both and saves less).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from examiner.stats.sequential import BETS, GATES, confidence_sequence, sequential_gate
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


def fixed_n(scores: np.ndarray) -> int:
    """Clusters a fixed-n 95 % interval needs to be WIDTH wide, with the population's own variance of
    cluster accuracy known and the finite-population correction: n0 / (1 + (n0 - 1) / N)."""
    n0 = (2 * 1.96 / WIDTH) ** 2 * float(np.var(scores, ddof=1))
    return min(CLUSTERS, int(np.ceil(n0 / (1 + (n0 - 1) / CLUSTERS))))


def width_rule(rng: np.random.Generator, icc: float, reps: int) -> dict[str, Any]:
    sizes = np.full(CLUSTERS, float(UNITS))
    hits = dict.fromkeys(BETS, 0)
    asked: dict[str, list[int]] = {bets: [] for bets in BETS}
    naive_hits = 0
    fixed = []
    for _ in range(reps):
        correct = rng.binomial(UNITS, cluster_accuracies(rng, rng.uniform(0.5, 0.9), icc)).astype(float)
        truth = correct.sum() / sizes.sum()
        for bets in BETS:
            seq = confidence_sequence(correct, sizes, sizes, alpha=ALPHA, bets=bets)
            narrow = seq.width <= WIDTH + 1e-12
            k = int(np.argmax(narrow)) if narrow.any() else CLUSTERS - 1
            hits[bets] += bool(seq.lower[k] <= truth <= seq.upper[k])
            asked[bets].append(k + 1)
        _, lo, hi = naive_stop(correct / UNITS)
        naive_hits += bool(lo <= truth <= hi)
        fixed.append(fixed_n(correct / UNITS))
    fixed_saved = 1 - np.array(fixed) / CLUSTERS
    row: dict[str, Any] = {"icc": icc, "naive_peeking_coverage": naive_hits / reps,
                           "fixed_n_saved_median": float(np.median(fixed_saved)),
                           "fixed_n_saved_p90": float(np.percentile(fixed_saved, 10))}
    for bets in BETS:
        saved = 1 - np.array(asked[bets]) / CLUSTERS
        row[bets] = {"coverage_at_stop": hits[bets] / reps, "calls_saved_median": float(np.median(saved)),
                     "calls_saved_p90": float(np.percentile(saved, 10)),
                     "clusters_asked_median": float(np.median(asked[bets]))}
    return row


def moved(base: np.ndarray, d: float, mean: float) -> np.ndarray:
    """Cluster accuracies whose mean is `mean` + d when `base`'s mean is `mean`, each kept within [0, 1]."""
    return base + d * (1 - base) / (1 - mean) if d >= 0 else base * (1 + d / mean)


def gate_rule(rng: np.random.Generator, d: float, reps: int) -> dict[str, Any]:
    sizes = np.full(CLUSTERS, float(UNITS))
    outcomes: dict[str, dict[str, int]] = {scheme: {} for scheme in GATES}
    wrong = dict.fromkeys(GATES, 0)
    asked: dict[str, list[int]] = {scheme: [] for scheme in GATES}
    for _ in range(reps):
        mean = rng.uniform(0.5, 0.9)
        p = cluster_accuracies(rng, mean, 0.3)
        q = moved(p, d, mean)
        draw = rng.random((CLUSTERS, UNITS))
        base = (draw < p[:, None]).sum(axis=1).astype(float)
        new = (draw < q[:, None]).sum(axis=1).astype(float)
        truth = (new.sum() - base.sum()) / sizes.sum()
        for scheme in GATES:
            decision = sequential_gate(new, base, sizes, sizes, margin=MARGIN, alpha=ALPHA, scheme=scheme)
            outcomes[scheme][decision.outcome] = outcomes[scheme].get(decision.outcome, 0) + 1
            wrong[scheme] += (decision.outcome == "worse" and truth > -MARGIN) or (
                decision.outcome in ("not worse", "equivalent") and truth <= -MARGIN)
            asked[scheme].append(decision.clusters)
    row: dict[str, Any] = {"difference": d}
    for scheme in GATES:
        saved = 1 - np.array(asked[scheme]) / CLUSTERS
        row[scheme] = {**{k: v / reps for k, v in sorted(outcomes[scheme].items())},
                       "error": wrong[scheme] / reps, "calls_saved_median": float(np.median(saved)),
                       "calls_saved_p90": float(np.percentile(saved, 10)),
                       "clusters_asked_median": float(np.median(asked[scheme]))}
    return row


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
    def low(rows: list[dict[str, Any]], bets: str, key: str) -> str:
        return f"{min(r[bets][key] for r in rows):.3f}"

    gate_saving = [gate[2 * MARGIN], gate[-2 * MARGIN]]
    print_result({
        "coverage_at_stop": low(width, "planned", "coverage_at_stop"),
        "naive_peeking_coverage": f"{min(w['naive_peeking_coverage'] for w in width):.3f}",
        "calls_saved_median": low(width, "planned", "calls_saved_median"),
        "calls_saved_p90": low(width, "planned", "calls_saved_p90"),
        "gate_error_null": f"{gate[0.0]['one-sided']['error']:.3f}",
        "gate_error_margin": f"{gate[-MARGIN]['one-sided']['error']:.3f}",
        "gate_calls_saved": low(gate_saving, "one-sided", "calls_saved_median"),
        "gate_calls_saved_p90": low(gate_saving, "one-sided", "calls_saved_p90"),
        "coverage_at_stop_plugin": low(width, "plugin", "coverage_at_stop"),
        "calls_saved_median_plugin": low(width, "plugin", "calls_saved_median"),
        "calls_saved_p90_plugin": low(width, "plugin", "calls_saved_p90"),
        "gate_error_null_two_sided": f"{gate[0.0]['two-sided']['error']:.3f}",
        "gate_error_margin_two_sided": f"{gate[-MARGIN]['two-sided']['error']:.3f}",
        "gate_calls_saved_two_sided": low(gate_saving, "two-sided", "calls_saved_median"),
        "fixed_n_saved_median": f"{min(w['fixed_n_saved_median'] for w in width):.3f}",
        "fixed_n_saved_p90": f"{min(w['fixed_n_saved_p90'] for w in width):.3f}",
    })


if __name__ == "__main__":
    main()
