"""The anytime-valid sequence against a plain loop written from the paper's formulas (Waudby-Smith &
Ramdas, hedged capital, sampling without replacement), its guarantee on simulated exams, and the
sequential gate's outcomes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from examiner.stats.sequential import confidence_sequence, gate_outcome, paired_sequence, sequential_gate


def reference_bounds(y: list[float], m: list[float], population: list[float], alpha: float,
                     grid_step: float, bets: str = "plugin", sides: str = "joint",
                     cap: float = 0.5) -> list[tuple[float, float]]:
    """The sequence by scalar loops: for each candidate θ and each step, the WoR mean of the clusters
    left, the bet (plug-in: tuned for t log(1 + t); planned: for half the population's clusters; for
    log(2/α) when the two capitals are read together, log(1/α) when each alone), capped at `cap` of the
    largest safe bet, the two capitals; then the extreme θ kept (together: half their sum below 1/α;
    each: the lowest θ the upward bets keep, the highest the downward ones keep), the logical range and
    the running intersection."""
    n, total, m_max = len(population), sum(population), max(population)
    thetas = [i * grid_step for i in range(round(1 / grid_step) + 1)]
    low_by_step: list[list[float]] = [[] for _ in y]
    high_by_step: list[list[float]] = [[] for _ in y]
    log_term = math.log(2 / alpha) if sides == "joint" else math.log(1 / alpha)
    for theta in thetas:
        up = down = 1.0
        seen = 0.0
        s_x = 0.0
        s_sq = 0.0
        var_prev = 0.25
        ruled_out = False
        for t, (yi, mi) in enumerate(zip(y, m), start=1):
            x = theta + (yi - theta * mi) / m_max
            mu = (n * theta - seen) / (n - t + 1)
            if mu < 0 or mu > 1:
                ruled_out = True
            horizon = max(1.0, n / 2) if bets == "planned" else t * math.log(1 + t)
            lam = math.sqrt(2 * log_term / (var_prev * horizon))
            lam_up = min(lam, cap / mu) if mu > 0 else lam
            lam_down = min(lam, cap / (1 - mu)) if mu < 1 else lam
            up *= max(1 + lam_up * (x - mu), 0.0)
            down *= max(1 - lam_down * (x - mu), 0.0)
            seen += x
            s_x += x
            mean_t = (0.5 + s_x) / (t + 1)
            s_sq += (x - mean_t) ** 2
            var_prev = (0.25 + s_sq) / (t + 1)
            if ruled_out:
                continue
            if sides == "joint" and 0.5 * up + 0.5 * down < 1 / alpha:
                low_by_step[t - 1].append(theta)
                high_by_step[t - 1].append(theta)
            if sides == "each" and up < 1 / alpha:
                low_by_step[t - 1].append(theta)
            if sides == "each" and down < 1 / alpha:
                high_by_step[t - 1].append(theta)
    out = []
    lo_run, hi_run = 0.0, 1.0
    correct = asked = 0.0
    for t, (low, high) in enumerate(zip(low_by_step, high_by_step)):
        correct += y[t]
        asked += m[t]
        lo = max(min(low) - grid_step, 0.0) if low else 0.0
        hi = min(max(high) + grid_step, 1.0) if high else 1.0
        lo = max(lo, correct / total)
        hi = min(hi, (correct + total - asked) / total)
        lo_run, hi_run = max(lo_run, lo), min(hi_run, hi)
        out.append((lo_run, max(hi_run, lo_run)))
    return out


@pytest.mark.parametrize(("bets", "sides", "cap"), [("planned", "joint", 0.5), ("plugin", "joint", 0.5),
                                                    ("planned", "each", 0.9), ("plugin", "each", 0.5)])
def test_bounds_equal_a_plain_loop_implementation(bets: str, sides: str, cap: float) -> None:
    rng = np.random.default_rng(7)
    population = rng.integers(2, 7, size=40).astype(float)
    order = rng.permutation(40)[:25]
    sizes = population[order]
    scores = rng.binomial(sizes.astype(int), 0.7).astype(float)
    seq = confidence_sequence(scores, sizes, population, alpha=0.05, breaks=200, bets=bets, sides=sides,
                              truncation=cap)
    ref = reference_bounds(list(scores), list(sizes), list(population), 0.05, 1 / 200, bets, sides, cap)
    assert np.max(np.abs(seq.lower - [r[0] for r in ref])) < 1e-3
    assert np.max(np.abs(seq.upper - [r[1] for r in ref])) < 1e-3
    assert seq.upper[-1] - seq.lower[-1] < seq.upper[0] - seq.lower[0]


def test_the_whole_population_gives_the_exact_accuracy() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 6, size=30).astype(float)
    scores = rng.binomial(sizes.astype(int), 0.6).astype(float)
    seq = confidence_sequence(scores, sizes, sizes)
    truth = scores.sum() / sizes.sum()
    assert seq.lower[-1] == pytest.approx(truth) and seq.upper[-1] == pytest.approx(truth)


@pytest.mark.parametrize("bets", ["planned", "plugin"])
def test_covers_the_truth_at_every_step_far_more_often_than_alpha_fails(bets: str) -> None:
    rng = np.random.default_rng(11)
    misses = 0
    for _ in range(60):
        clusters = rng.beta(2.1, 0.9, size=80)  # accuracy 0.7, intraclass correlation 0.25
        sizes = np.full(80, 4.0)
        scores = rng.binomial(4, clusters).astype(float)
        truth = scores.sum() / sizes.sum()
        seq = confidence_sequence(scores, sizes, sizes, breaks=400, bets=bets)
        misses += bool(np.any((seq.lower > truth + 1e-12) | (seq.upper < truth - 1e-12)))
    assert misses <= 6  # at most alpha = 0.05 in expectation over the whole path: 3 of 60


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and its number"):
        confidence_sequence(np.array([3.0]), np.array([2.0]), np.array([2.0, 2.0]))
    with pytest.raises(ValueError, match="bets must be one of"):
        confidence_sequence(np.array([1.0]), np.array([2.0]), np.array([2.0]), bets="kelly")
    with pytest.raises(ValueError, match="sides must be one of"):
        confidence_sequence(np.array([1.0]), np.array([2.0]), np.array([2.0]), sides="upper")
    with pytest.raises(ValueError, match="truncation must lie"):
        confidence_sequence(np.array([1.0]), np.array([2.0]), np.array([2.0]), truncation=1.0)
    with pytest.raises(ValueError, match="scheme must be one of"):
        sequential_gate(np.array([1.0]), np.array([1.0]), np.array([2.0]), np.array([2.0]), margin=0.1,
                        scheme="three-sided")
    with pytest.raises(ValueError, match="population of 1"):
        confidence_sequence(np.array([1.0, 1.0]), np.array([2.0, 2.0]), np.array([2.0]))


def test_paired_sequence_holds_the_difference() -> None:
    rng = np.random.default_rng(5)
    sizes = np.full(60, 5.0)
    base = rng.binomial(5, 0.6, size=60).astype(float)
    new = np.minimum(base + rng.binomial(1, 0.5, size=60), 5.0)
    seq = paired_sequence(new, base, sizes, sizes)
    truth = (new.sum() - base.sum()) / sizes.sum()
    assert seq.lower[-1] == pytest.approx(truth) and seq.upper[-1] == pytest.approx(truth)
    assert np.all(seq.lower <= seq.upper) and seq.lower[0] >= -1 and seq.upper[0] <= 1


def test_gate_outcomes() -> None:
    assert gate_outcome(-0.2, -0.1, 0.05) == "worse"
    assert gate_outcome(-0.01, 0.02, 0.05) == "equivalent"
    assert gate_outcome(0.01, 0.2, 0.05) == "not worse"
    assert gate_outcome(-0.1, 0.1, 0.05) == "undecided"
    rng = np.random.default_rng(2)
    sizes = np.full(200, 5.0)
    base = rng.binomial(5, 0.5, size=200).astype(float)
    better = np.minimum(base + rng.binomial(2, 0.5, size=200), 5.0)
    decision = sequential_gate(better, base, sizes, sizes, margin=0.05)
    assert decision.outcome == "not worse" and decision.clusters < 200
    worse = np.maximum(base - rng.binomial(2, 0.5, size=200), 0.0)
    assert sequential_gate(worse, base, sizes, sizes, margin=0.05).outcome == "worse"


def test_accuracy_over_answered_units_has_its_own_denominator() -> None:
    rng = np.random.default_rng(9)
    sizes = np.full(50, 4.0)
    answered = rng.binomial(4, 0.8, size=50).astype(float)
    correct = rng.binomial(answered.astype(int), 0.6).astype(float)
    seq = confidence_sequence(correct, sizes, sizes, denominators=answered)
    truth = correct.sum() / answered.sum()
    assert seq.lower[-1] == pytest.approx(truth) and seq.upper[-1] == pytest.approx(truth)
    assert seq.lower[20] < truth < seq.upper[20]
    assert seq.estimate[20] == pytest.approx(correct[:21].sum() / answered[:21].sum())


def test_each_bound_alone_is_tighter_than_the_joint_interval_and_still_holds() -> None:
    """sides="each": narrower than the joint interval (it is a 1 − 2 alpha interval), yet the lower bound
    alone misses the truth on a path no more often than alpha allows."""
    rng = np.random.default_rng(13)
    misses = 0
    narrower = []
    for _ in range(60):
        clusters = rng.beta(2.1, 0.9, size=80)
        sizes = np.full(80, 4.0)
        scores = rng.binomial(4, clusters).astype(float)
        truth = scores.sum() / sizes.sum()
        each = confidence_sequence(scores, sizes, sizes, breaks=400, sides="each")
        joint = confidence_sequence(scores, sizes, sizes, breaks=400)
        narrower.append(float(np.mean(joint.width - each.width)))
        misses += bool(np.any(each.lower > truth + 1e-12))
    assert misses <= 6  # at most alpha = 0.05 in expectation over the whole path: 3 of 60
    assert np.mean(narrower) > 0.005


def test_one_sided_gate_at_exactly_the_margin_rarely_passes() -> None:
    """New worse than base by exactly M in every draw: "not worse" or "equivalent" is a wrong call, at most
    alpha of the time (the default one-sided scheme, whose bounds are each at 1 − alpha alone)."""
    rng = np.random.default_rng(17)
    sizes = np.full(80, 5.0)
    wrong = 0
    for _ in range(40):
        base = rng.binomial(5, 0.7, size=80).astype(float)
        new = base.copy()
        drop = rng.choice(np.flatnonzero(base > 0), size=int(0.05 * sizes.sum()), replace=False)
        new[drop] -= 1  # exactly M = 0.05 of the units lost (one per chosen cluster)
        decision = sequential_gate(new, base, sizes, sizes, margin=0.05)
        wrong += decision.outcome in ("not worse", "equivalent")
    assert wrong <= 4  # alpha = 0.05: 2 of 40 expected at most
