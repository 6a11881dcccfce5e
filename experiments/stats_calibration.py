"""Do the decision statistics (examiner/stats: paired, intervals, planning, ppi, rankings) have the error
rates they claim? Monte Carlo with known truth (issue 28, acceptance).

    python experiments/stats_calibration.py            # about 20 minutes on 2 loaded cores
    python experiments/stats_calibration.py --quick    # fewer replications, for a look

Truth models (all seeded):
- Paired targets on clustered units: D documents of m units. Each target's per-document accuracy is
  Beta-distributed with mean mu (A) or mu + delta (B) and alpha + beta = 1/ICC - 1, so the intraclass
  correlation of a target's 0/1 verdicts within a document is exactly ICC. The two targets' document
  accuracies are tied by a Gaussian copula of correlation RHO (a document easy for A tends to be easy for
  B, but not always: the difference itself is clustered, which is what breaks McNemar's test). Verdicts
  are Bernoulli given the document's accuracy. The estimand is delta (the difference in expected accuracy).
- PPI: N true labels Bernoulli(0.6), a judge that passes 30 % of wrong answers and fails 5 % of right
  ones (15 % error in all, lenient), n of the N units drawn at random for human labels; the estimand is
  the accuracy over the N units.
- Rankings: matches among players of known strengths; the library's bootstrap intervals are compared with
  a pandas-free reimplementation (below, as reference; FastChat is Apache-2.0) of FastChat's compute_elo + get_bootstrap_result and of
  compute_bootstrap_bt (preprocess_for_bt, multinomial draw, fit_bt, scale_and_offset) fed the same seeded
  draws (numpy's default_rng stands in for pandas' sample(frac=1, replace=True) and FastChat's own seed).

The RESULT line: paired_fpr (cluster test, no true difference, 50 x 10, ICC 0.7), naive_fpr (McNemar's
exact test on the same data), diff_ci_coverage (95 % interval of the difference, same data),
power_error_max (largest |predicted - simulated| power over three effect sizes, the prediction from a
pilot through examiner.stats.planning), ppi_coverage, ppi_width_ratio (PPI++ width over the human-only
width), judge_bias (the raw judge figure minus the truth), small_sample_coverage (the small-sample
intervals with fewer than 10 documents, the worst of the paired difference and the single accuracy over
4, 6 and 8 documents), small_sample_percentile_coverage (the percentile bootstrap on the same data),
elo_matches_fastchat (bootstrap Elo and BT intervals equal FastChat's procedure to 1e-6 rating points).
Issue 40 adds: self_bound_min (a target held against itself at 4, 30, 40 and 100 documents: the smallest
distance of the gate's one-sided 95 % bound below 0; never 0 when the verdicts vary), coverage_30_40_min
(the worst coverage of the paired-difference and accuracy intervals at 30, 40 and 60 documents, 3,000
draws each by default), ppi_rare_bias_se (PPI++ on a 10 % label with 20 and 50 labels: the larger
|bias| in Monte Carlo standard errors; the share of draws wider than the human-only interval is printed
and saved), gate_test_disagreement (the largest share of those draws in which the interval, the cluster
test and the gate disagree on significance).
"""

from __future__ import annotations

import argparse
import math
import time
from collections import defaultdict
from typing import Any

import numpy as np
from finish import RESULTS, print_result, save_json
from scipy import stats as sps
from scipy.optimize import minimize
from scipy.special import expit

from examiner.core.labels import Preference
from examiner.meta.ranking import elo as elo_shuffles
from examiner.stats.clusters import bootstrap_totals, grouping
from examiner.stats.correlation import percentile_interval
from examiner.stats.intervals import accuracy_interval
from examiner.stats.paired import compare_paired, non_inferiority
from examiner.stats.planning import design_from_pilot, predicted_power
from examiner.stats.ppi import calibrated_accuracy
from examiner.stats.rankings import battles, bradley_terry_bootstrap_samples, elo_bootstrap_samples

ICC, RHO, MU = 0.7, 0.6, 0.6
DOCUMENTS, UNITS = 50, 10
EFFECTS = (0.08, 0.12, 0.16)


# ---------------------------------------------------------------------------------------------------
# Truth models
# ---------------------------------------------------------------------------------------------------


def beta_shape(mean: float, icc: float) -> tuple[float, float]:
    total = 1.0 / icc - 1.0
    return mean * total, (1.0 - mean) * total


def paired_data(rng: np.random.Generator, documents: int, units: int, delta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One exam: verdicts of A and B (documents x units, flattened) and the document of each unit."""
    z = rng.multivariate_normal([0.0, 0.0], [[1.0, RHO], [RHO, 1.0]], size=documents)
    u = sps.norm.cdf(z)
    p_a = sps.beta.ppf(u[:, 0], *beta_shape(MU, ICC))
    p_b = sps.beta.ppf(u[:, 1], *beta_shape(MU + delta, ICC))
    a = (rng.random((documents, units)) < p_a[:, None]).astype(int).ravel()
    b = (rng.random((documents, units)) < p_b[:, None]).astype(int).ravel()
    return a, b, np.repeat(np.arange(documents), units)


# ---------------------------------------------------------------------------------------------------
# Paired test, interval and power
# ---------------------------------------------------------------------------------------------------


def paired_runs(rng: np.random.Generator, delta: float, reps: int, documents: int = DOCUMENTS) -> dict[str, float]:
    cluster_reject = naive_reject = covered = 0
    widths = []
    for _ in range(reps):
        a, b, docs = paired_data(rng, documents, UNITS, delta)
        result = compare_paired(a.tolist(), b.tolist(), docs.tolist())
        cluster_reject += result.clustered_test.p_value < 0.05
        naive_reject += result.mcnemar.p_value < 0.05
        d = result.accuracy_difference
        covered += d.low <= delta <= d.high
        widths.append(d.high - d.low)
    return {
        "delta": delta,
        "reps": reps,
        "cluster_reject": cluster_reject / reps,
        "naive_reject": naive_reject / reps,
        "coverage": covered / reps,
        "mean_width": float(np.mean(widths)),
    }


def predicted(rng: np.random.Generator, delta: float, pilot_documents: int) -> float:
    """Power predicted from a pilot of the same design (examiner.stats.planning)."""
    a, b, docs = paired_data(rng, pilot_documents, UNITS, delta)
    design = design_from_pilot(a.tolist(), docs.tolist(), outcomes_b=b.tolist())
    return predicted_power(design, delta, DOCUMENTS)


# ---------------------------------------------------------------------------------------------------
# Small samples: coverage by number of documents
# ---------------------------------------------------------------------------------------------------


def percentile_paired(a: np.ndarray, b: np.ndarray, docs: np.ndarray, seed: int) -> tuple[float, float]:
    cols = np.column_stack([a, np.ones_like(a), b, np.ones_like(b)]).astype(float)
    totals = bootstrap_totals(grouping(docs.tolist()), cols, 1000, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = totals[:, 2] / totals[:, 3] - totals[:, 0] / totals[:, 1]
    low, high = percentile_interval(draws, 0.05)
    return float(low), float(high)


def percentile_accuracy(a: np.ndarray, docs: np.ndarray, seed: int) -> tuple[float, float]:
    cols = np.column_stack([a, np.ones_like(a)]).astype(float)
    totals = bootstrap_totals(grouping(docs.tolist()), cols, 1000, seed)
    low, high = percentile_interval(totals[:, 0] / totals[:, 1], 0.05)
    return float(low), float(high)


def small_sample_runs(rng: np.random.Generator, documents: int, reps: int, delta: float = 0.0) -> dict[str, Any]:
    """Coverage of the library's interval (small-sample method below the threshold, bootstrap above) and
    of the percentile bootstrap forced on the same data, for the paired difference and one accuracy."""
    hits = {"paired": 0, "paired_percentile": 0, "accuracy": 0, "accuracy_percentile": 0}
    zero_width = 0
    for _ in range(reps):
        a, b, docs = paired_data(rng, documents, UNITS, delta)
        seed = int(rng.integers(1 << 31))
        d = compare_paired(a.tolist(), b.tolist(), docs.tolist()).accuracy_difference
        hits["paired"] += d.low <= delta <= d.high
        zero_width += d.high == d.low
        low, high = percentile_paired(a, b, docs, seed)
        hits["paired_percentile"] += low <= delta <= high
        acc = accuracy_interval(a.tolist(), docs.tolist())
        hits["accuracy"] += acc.low <= MU <= acc.high
        low, high = percentile_accuracy(a, docs, seed)
        hits["accuracy_percentile"] += low <= MU <= high
    out: dict[str, Any] = {name: count / reps for name, count in hits.items()}
    out.update(documents=documents, reps=reps, small_sample=d.small_sample, zero_width=zero_width)
    return out


# ---------------------------------------------------------------------------------------------------
# Issue 40: one interval family at every size
# ---------------------------------------------------------------------------------------------------


def self_comparison(rng: np.random.Generator, documents: int) -> dict[str, Any]:
    """A target held against itself (verdicts with spread, from the truth model): the gate's one-sided
    95 % bound, the gate at margin 0.001, compare's detectable effect and the exact bound of 0
    discordant units of n (1 - 0.05^(1/n)) beside them."""
    a, _, docs = paired_data(rng, documents, UNITS, 0.0)
    decision = non_inferiority(a.tolist(), a.tolist(), docs.tolist(), margin=0.001)
    compared = compare_paired(a.tolist(), a.tolist(), docs.tolist())
    return {
        "documents": documents,
        "units": int(a.size),
        "lower_bound": decision.lower_bound,
        "exact_bound": -(1 - 0.05 ** (1 / a.size)),
        "passes_margin_0001": decision.passed,
        "detectable_80": compared.power.minimum_detectable_effect,
        "interval": [compared.accuracy_difference.low, compared.accuracy_difference.high],
    }


def coverage_runs(rng: np.random.Generator, documents: int, reps: int, margin: float = 0.05) -> dict[str, Any]:
    """Coverage of the paired-difference and accuracy intervals (no true difference), the percentile
    bootstrap's on the same data for reference, and how often the interval, the cluster test and the
    gate disagree: interval leaves out 0 but p >= 0.05 (or the reverse); gate passes but its p >= 0.05
    (or the reverse)."""
    hits = {"paired": 0, "paired_percentile": 0, "accuracy": 0}
    disagree = 0
    for _ in range(reps):
        a, b, docs = paired_data(rng, documents, UNITS, 0.0)
        result = compare_paired(a.tolist(), b.tolist(), docs.tolist())
        d = result.accuracy_difference
        hits["paired"] += d.low <= 0.0 <= d.high
        low, high = percentile_paired(a, b, docs, int(rng.integers(1 << 31)))
        hits["paired_percentile"] += low <= 0.0 <= high
        acc = accuracy_interval(a.tolist(), docs.tolist())
        hits["accuracy"] += acc.low <= MU <= acc.high
        excludes = not d.low <= 0.0 <= d.high
        gate = non_inferiority(a.tolist(), b.tolist(), docs.tolist(), margin=margin)
        disagree += (excludes != (result.clustered_test.p_value < 0.05)) or (gate.passed != (gate.p_value < 0.05))
    out: dict[str, Any] = {name: count / reps for name, count in hits.items()}
    out.update(documents=documents, reps=reps, disagreement=disagree / reps)
    return out


def ppi_rare_runs(rng: np.random.Generator, labels: int, reps: int, big_n: int = 1000, share: float = 0.1) -> dict[str, Any]:
    """PPI++ on a rare label (share 0.1 of big_n rows, as PandaLM's ties are 10.5 %) with `labels` human
    labels: the judge finds 45 % of the label and flags 6 % of the rest. Bias of the estimate against
    the rows' own share, its Monte Carlo standard error, coverage, and the share of draws whose interval
    is wider than the human-only Wilson interval."""
    errors, wider, covered = [], 0, 0
    for _ in range(reps):
        truth = (rng.random(big_n) < share).astype(int)
        u = rng.random(big_n)
        judge = np.where(truth == 1, (u < 0.45).astype(int), (u < 0.06).astype(int))
        human: list[int | None] = [None] * big_n
        for i in rng.choice(big_n, size=labels, replace=False):
            human[i] = int(truth[i])
        result = calibrated_accuracy(judge.tolist(), human)
        target = float(truth.mean())
        errors.append(result.ppi.estimate - target)
        wider += (result.ppi.high - result.ppi.low) > (result.human_only.high - result.human_only.low)
        covered += result.ppi.low <= target <= result.ppi.high
    err = np.asarray(errors)
    mc_se = float(err.std(ddof=1) / math.sqrt(reps))
    return {"labels": labels, "reps": reps, "bias": float(err.mean()), "mc_se": mc_se,
            "bias_in_se": float(err.mean() / mc_se), "wider_than_human_only": wider / reps, "coverage": covered / reps}


# ---------------------------------------------------------------------------------------------------
# PPI
# ---------------------------------------------------------------------------------------------------


def ppi_runs(rng: np.random.Generator, reps: int, big_n: int = 20_000, n: int = 200) -> dict[str, float]:
    covered = human_covered = 0
    ratios, biases = [], []
    for _ in range(reps):
        truth = (rng.random(big_n) < 0.6).astype(int)
        flip = rng.random(big_n)
        judge = np.where(truth == 1, (flip >= 0.05).astype(int), (flip < 0.30).astype(int))
        human: list[int | None] = [None] * big_n
        for i in rng.choice(big_n, size=n, replace=False):
            human[i] = int(truth[i])
        result = calibrated_accuracy(judge.tolist(), human)
        target = truth.mean()
        covered += result.ppi.low <= target <= result.ppi.high
        human_covered += result.human_only.low <= target <= result.human_only.high
        ratios.append((result.ppi.high - result.ppi.low) / (result.human_only.high - result.human_only.low))
        biases.append(result.judge_raw.estimate - target)
    return {
        "reps": reps,
        "ppi_coverage": covered / reps,
        "human_only_coverage": human_covered / reps,
        "width_ratio": float(np.mean(ratios)),
        "judge_bias": float(np.mean(biases)),
        "last_lambda": result.lam,
        "last_kappa": result.agreement.kappa,
    }


# ---------------------------------------------------------------------------------------------------
# FastChat's procedure, reimplemented pandas-free as the reference
# ---------------------------------------------------------------------------------------------------


def fastchat_compute_elo(rows: list[tuple[str, str, str]], k: float = 4, scale: float = 400, base: float = 10, init: float = 1000) -> dict[str, float]:
    """As elo_analysis.compute_elo: one pass in row order, a rating created when a model is first seen,
    each side updated with its own expected score."""
    rating: dict[str, float] = defaultdict(lambda: init)
    for first, second, winner in rows:
        r1, r2 = rating[first], rating[second]
        expect_first = 1 / (1 + base ** ((r2 - r1) / scale))
        expect_second = 1 / (1 + base ** ((r1 - r2) / scale))
        score_first = {"model_a": 1, "model_b": 0, "tie": 0.5}[winner]
        rating[first] += k * (score_first - expect_first)
        rating[second] += k * (1 - score_first - expect_second)
    return dict(rating)


def fastchat_bootstrap_elo(rows: list[tuple[str, str, str]], num_round: int, draws: np.ndarray) -> dict[str, tuple[float, float, float]]:
    """get_bootstrap_result(battles, compute_elo): each round a resample (here the given draw) of the
    battles, in draw order; then median and 2.5 / 97.5 percentiles per model (pandas skips a model's
    missing rounds, as nanquantile does)."""
    per_round = [fastchat_compute_elo([rows[i] for i in draws[r]]) for r in range(num_round)]
    models = sorted({m for r in per_round for m in r})
    table = np.array([[r.get(m, np.nan) for m in models] for r in per_round])
    return {m: (float(np.nanmedian(table[:, j])), *(float(v) for v in np.nanquantile(table[:, j], [0.025, 0.975]))) for j, m in enumerate(models)}


def fastchat_bootstrap_bt(rows: list[tuple[str, str, str]], num_round: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """rating_systems.compute_bt + compute_bootstrap_bt (no anchor model among ours, so no offset)."""
    models: list[str] = []
    for column in (0, 1):
        for r in rows:
            if r[column] not in models:
                models.append(r[column])
    schedule = np.full((len(rows), 3), 1, dtype=np.int32)
    schedule[:, 0] = [models.index(r[0]) for r in rows]
    schedule[:, 1] = [models.index(r[1]) for r in rows]
    schedule[[r[2] == "model_a" for r in rows], 2] = 2
    schedule[[r[2] == "model_b" for r in rows], 2] = 0
    matchups_outcomes, weights = np.unique(schedule, return_counts=True, axis=0)
    matchups = matchups_outcomes[:, [0, 1]]
    outcomes = matchups_outcomes[:, 2].astype(np.float64) / 2.0
    weights = weights.astype(np.float64)

    def loss_and_grad(ratings: np.ndarray, w: np.ndarray, alpha: float) -> tuple[float, np.ndarray]:
        matchup_ratings = ratings[matchups]
        probs = expit(alpha * (matchup_ratings[:, 0] - matchup_ratings[:, 1]))
        loss = -((np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes)) * w).sum()
        grads = -alpha * (outcomes - probs) * w
        model_grad = np.zeros_like(ratings)
        np.add.at(model_grad, matchups[:, [0, 1]], grads[:, None] * np.array([1.0, -1.0]))
        return loss, model_grad

    def fit(w: np.ndarray) -> np.ndarray:
        result = minimize(loss_and_grad, np.zeros(len(models)), args=(w, math.log(10.0)), jac=True, method="L-BFGS-B",
                          options={"maxiter": 100, "gtol": 1e-6})
        return result["x"] * 400 + 1000

    point = fit(weights)
    idxs = np.random.default_rng(seed=seed).multinomial(n=len(rows), pvals=weights / weights.sum(), size=num_round)
    boot = np.array([fit(w) for w in idxs.astype(np.float64) / len(rows)])
    return {m: (float(point[j]), *(float(v) for v in np.quantile(boot[:, j], [0.025, 0.975]))) for j, m in enumerate(models)}


def ranking_check(seed: int = 0, n_matches: int = 60, num_round: int = 1000) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    strength = {"judge-a": 1.0, "judge-b": 0.5, "judge-c": 0.0, "judge-d": -0.5}
    names = list(strength)
    rows = []
    for _ in range(n_matches):
        x, y = rng.choice(len(names), size=2, replace=False)
        p = expit(strength[names[x]] - strength[names[y]])
        u = rng.random()
        rows.append((names[x], names[y], "tie" if abs(u - p) < 0.05 else ("model_a" if u < p else "model_b")))
    to_pref = {"model_a": Preference.FIRST, "model_b": Preference.SECOND, "tie": Preference.TIE}
    matches = [(a, b, to_pref[w]) for a, b, w in rows]
    encoded = battles(matches)
    players, elo_rounds = elo_bootstrap_samples(encoded, num_round, seed)
    draws = np.random.default_rng(seed).integers(0, len(rows), size=(num_round, len(rows)))
    reference_elo = fastchat_bootstrap_elo(rows, num_round, draws)
    _, bt_point, bt_rounds = bradley_terry_bootstrap_samples(encoded, num_round, seed)
    reference_bt = fastchat_bootstrap_bt(rows, num_round, seed)
    elo_diff = bt_diff = 0.0
    table = {}
    for j, player in enumerate(players):
        ours_elo = (float(np.nanmedian(elo_rounds[:, j])), *(float(v) for v in np.nanquantile(elo_rounds[:, j], [0.025, 0.975])))
        ours_bt = (float(bt_point[j]), *(float(v) for v in np.quantile(bt_rounds[:, j], [0.025, 0.975])))
        elo_diff = max(elo_diff, *(abs(x - y) for x, y in zip(ours_elo, reference_elo[player])))
        bt_diff = max(bt_diff, *(abs(x - y) for x, y in zip(ours_bt, reference_bt[player])))
        table[player] = {"elo": ours_elo, "elo_fastchat": reference_elo[player], "bt": ours_bt, "bt_fastchat": reference_bt[player]}
    shuffles = elo_shuffles(matches, n_shuffles=200, seed=seed)
    order_spread = {r.player: (r.min, r.max) for r in shuffles.ratings}
    return {
        "n_matches": n_matches,
        "rounds": num_round,
        "elo_max_abs_diff": elo_diff,
        "bt_max_abs_diff": bt_diff,
        "players": table,
        "match_order_spread_200_shuffles": order_spread,
    }


# ---------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer replications (a look, not the figures)")
    parser.add_argument("--seed", type=int, default=2028)
    args = parser.parse_args()
    reps = 200 if args.quick else 1000
    rng = np.random.default_rng(args.seed)
    started = time.time()

    null = paired_runs(rng, 0.0, reps)
    print(f"null: cluster test rejects {null['cluster_reject']:.3f}, McNemar {null['naive_reject']:.3f}, "
          f"coverage {null['coverage']:.3f}  ({time.time() - started:.0f} s)", flush=True)
    power_rows = []
    for delta in EFFECTS:
        simulated = paired_runs(rng, delta, reps)
        simulated["predicted_power"] = predicted(rng, delta, pilot_documents=5000)
        power_rows.append(simulated)
        print(f"delta {delta}: simulated power {simulated['cluster_reject']:.3f}, predicted "
              f"{simulated['predicted_power']:.3f}, coverage {simulated['coverage']:.3f}", flush=True)

    small_reps = reps // 2
    by_documents = [small_sample_runs(rng, g, small_reps) for g in (4, 6, 8, 10, 15, 20, 30, 50)]
    for row in by_documents:
        print(f"{row['documents']:>3} documents: paired {row['paired']:.3f} (percentile {row['paired_percentile']:.3f}), "
              f"accuracy {row['accuracy']:.3f} (percentile {row['accuracy_percentile']:.3f})", flush=True)
    below_ten = [row for row in by_documents if row["documents"] < 10]

    selves = [self_comparison(rng, g) for g in (4, 30, 40, 100)]
    for row in selves:
        print(f"self-comparison, {row['documents']:>3} documents ({row['units']} units): bound {row['lower_bound']:+.4f} "
              f"(exact {row['exact_bound']:+.4f}), margin 0.001 {'passes' if row['passes_margin_0001'] else 'fails'}, "
              f"detectable {row['detectable_80']:.4f}", flush=True)
    coverage_reps = 3 * reps  # 3,000 by default: a coverage of 0.95 has a Monte Carlo standard error of 0.004
    coverage = [coverage_runs(rng, g, coverage_reps) for g in (30, 40, 60)]
    for row in coverage:
        print(f"{row['documents']:>3} documents, {row['reps']} draws: paired {row['paired']:.4f} (percentile "
              f"{row['paired_percentile']:.4f}), accuracy {row['accuracy']:.4f}, interval/test/gate disagree "
              f"{row['disagreement']:.4f}", flush=True)
    rare = [ppi_rare_runs(rng, n, coverage_reps) for n in (20, 50)]
    for row in rare:
        print(f"ppi, 10 % label, {row['labels']} labels: bias {row['bias']:+.5f} (MC SE {row['mc_se']:.5f}, "
              f"{row['bias_in_se']:+.2f} SE), coverage {row['coverage']:.3f}, wider than human-only in "
              f"{row['wider_than_human_only']:.3f}", flush=True)

    ppi = ppi_runs(rng, 4 * reps)  # a coverage near 0.95 needs thousands of replications to be told from 0.94
    print(f"ppi: coverage {ppi['ppi_coverage']:.3f}, width ratio {ppi['width_ratio']:.3f}, judge bias {ppi['judge_bias']:+.3f}", flush=True)
    ranking = ranking_check()

    figures = {
        "paired_fpr": f"{null['cluster_reject']:.3f}",
        "naive_fpr": f"{null['naive_reject']:.3f}",
        "diff_ci_coverage": f"{null['coverage']:.3f}",
        "power_error_max": f"{max(abs(r['cluster_reject'] - r['predicted_power']) for r in power_rows):.3f}",
        "ppi_coverage": f"{ppi['ppi_coverage']:.3f}",
        "ppi_width_ratio": f"{ppi['width_ratio']:.3f}",
        "judge_bias": f"{ppi['judge_bias']:+.3f}",
        "small_sample_coverage": f"{min(min(r['paired'], r['accuracy']) for r in below_ten):.3f}",
        "small_sample_percentile_coverage": f"{min(min(r['paired_percentile'], r['accuracy_percentile']) for r in below_ten):.3f}",
        "elo_matches_fastchat": str(ranking["elo_max_abs_diff"] < 1e-6 and ranking["bt_max_abs_diff"] < 1e-6).lower(),
        "self_bound_min": f"{min(-r['lower_bound'] for r in selves):.4f}",
        "coverage_30_40_min": f"{min(min(r['paired'], r['accuracy']) for r in coverage):.4f}",
        "ppi_rare_bias_se": f"{max(abs(r['bias_in_se']) for r in rare):.2f}",
        "gate_test_disagreement": f"{max(r['disagreement'] for r in coverage):.4f}",
    }
    save_json(
        {
            "settings": {"icc": ICC, "copula_rho": RHO, "mu": MU, "documents": DOCUMENTS, "units": UNITS, "reps": reps, "seed": args.seed},
            "null": null,
            "power": power_rows,
            "by_documents": by_documents,
            "ppi": ppi,
            "self_comparison": selves,
            "coverage_30_40_60": coverage,
            "ppi_rare_label": rare,
            "ranking": ranking,
            "seconds": round(time.time() - started, 1),
            "result": figures,
        },
        RESULTS / ("stats_calibration-quick.json" if args.quick else "stats_calibration.json"),
    )
    print_result(figures)


if __name__ == "__main__":
    main()
