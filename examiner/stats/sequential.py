"""Anytime-valid intervals for an exam asked cluster by cluster: a confidence sequence for a unit-weighted
accuracy, and the sequential non-inferiority gate on paired per-cluster differences.

Why a confidence sequence: a fixed-n interval holds at one n chosen in advance; watched after every
cluster and stopped when it "looks narrow enough", it covers less than it says (experiments/
sequential_exam.py measures how much). A confidence sequence holds at every n at once, so it holds at
any stopping time, whatever rule chose it.

The construction is the hedged betting confidence sequence of Waudby-Smith & Ramdas ("Estimating means
of bounded random variables by betting", JRSS-B 2024), in its variant for sampling without replacement
from a finite population: the exam's clusters are the population (N clusters, each of known size), asked
in a random order. The quantity is a ratio, units correct over units, so clusters of unequal size are
weighted by their units: for a candidate value θ each asked cluster gives
x_i(θ) = θ + (y_i − θ m_i) / m_max, which lies in [0, 1] when 0 <= y_i <= m_i and whose population mean is θ
exactly when θ is the population's accuracy (for clusters of one size, x_i is the cluster's accuracy and
the sequence is the paper's). For each θ on a grid, two capital processes bet on x against the mean the
not-yet-asked clusters must have under θ (WoR), with predictable bets truncated at 1/2 (the paper's hedged
capital); θ leaves the sequence once half their sum passes 1/α (Ville's inequality). The
interval is the smallest and largest θ left, intersected with the logically possible range (the units
not yet asked all wrong / all right) and with the intervals before it (running intersection), each
widened by one grid step.

The bets: by default (`bets="planned"`) the plug-in bet tuned for a planned number of clusters n* (the
paper's λ_t = sqrt(2 log(2/α) / (σ̂²_{t−1} n*)), here n* = half the population, fixed before any cluster
is asked), which concentrates the sequence's power around the stops a width or threshold rule reaches;
`bets="plugin"` is the paper's default λ_t = sqrt(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), tight early
and loose late. Both are predictable (they use the clusters before t only), so either keeps the capital a
nonnegative martingale and the guarantee; experiments/sequential_exam.py measures the two side by side
(the planned bets stop sooner at the same coverage).

The gate (`sequential_gate`) makes one-sided calls: "worse" rests on the upper bound alone (below −M),
"not worse" on the lower bound alone (above −M), "equivalent" on each bound against its side of the
margin (two one-sided tests). So by default (scheme "one-sided") it reads a sequence whose bounds each
hold alone with probability 1 − α (`sides="each"`: each side's capital against 1/α, where the hedged
interval needs half their sum past 1/α, i.e. each side near 2/α), and its bets are capped at 0.9 of the
largest safe bet, not 1/2: paired differences vary little, so the bets the plug-in asks for are large
and a cap at 1/2 binds. Any cap below 1 keeps the capital nonnegative, so the guarantee is unchanged.
The gate as first written (the hedged interval, bets capped at 1/2) stays as scheme "two-sided";
experiments/sequential_exam.py measures both on the same draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Sequence",
    "GATES",
    "GateOutcome",
    "SequentialGate",
    "confidence_sequence",
    "paired_sequence",
    "planned_clusters",
    "sequential_gate",
    "gate_outcome",
]

TRUNCATION = 0.5
"""The bets' cap as a share of the largest bet that keeps the capital positive (the paper's c = 1/2)."""

SIDES = ("joint", "each")
"""What a sequence's level holds: the whole interval ("joint") or each bound alone ("each")."""

GATES = {"one-sided": ("each", 0.9), "two-sided": ("joint", TRUNCATION)}
"""The gate's schemes, name -> (sides, truncation): "one-sided" (the default) decides on the two
one-sided bounds each at level 1 − alpha with bets capped at 0.9 of the largest safe bet; "two-sided" is
the gate as first written (the joint interval, bets capped at 1/2), kept selectable (module docstring)."""

BETS = ("planned", "plugin")
"""The predictable bets `confidence_sequence` offers (module docstring)."""


@dataclass(frozen=True)
class Sequence:
    """The sequence after each asked cluster: `estimate` (units correct / units asked so far), `lower` and
    `upper` (anytime-valid: together at 1 − alpha, or each alone with sides="each"), each of length
    clusters asked."""

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    alpha: float
    population: int
    """Clusters in the population (N)."""

    @property
    def width(self) -> np.ndarray:
        width: np.ndarray = self.upper - self.lower
        return width


def _check(scores: np.ndarray, sizes: np.ndarray, population_sizes: np.ndarray, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if scores.shape != sizes.shape or scores.ndim != 1:
        raise ValueError("scores and sizes must be 1-d arrays of one length (one entry per asked cluster)")
    if sizes.size > population_sizes.size:
        raise ValueError(f"{sizes.size} clusters asked from a population of {population_sizes.size}")
    if np.any(population_sizes <= 0) or np.any(sizes <= 0):
        raise ValueError("every cluster must hold at least one unit")
    if np.any(scores < 0) or np.any(scores > sizes + 1e-12):
        raise ValueError("a cluster's score must lie between 0 and its number of units")


def planned_clusters(population: int) -> float:
    """n*, the number of clusters the planned bets are tuned for: half the population (at least one)."""
    return max(1.0, population / 2)


def _capital(x: np.ndarray, grid: np.ndarray, population: int, alpha: float, bets: str = "planned",
             truncation: float = TRUNCATION, sides: str = "joint") -> tuple[np.ndarray, np.ndarray]:
    """WoR capitals (up, down), each (grid, t): row g is the capital after each observation of x[g] betting
    that the mean is above (up) or below (down) grid[g]; +inf where no population fits grid[g]. The bets
    are tuned for log(2/α) when the two are read together (hedged), log(1/α) when each alone."""
    t = np.arange(1, x.shape[1] + 1, dtype=float)
    seen_before = np.cumsum(x, axis=1) - x
    mu = (population * grid[:, None] - seen_before) / (population - (t - 1))
    # predictable plug-in bets: running mean and variance with one fake observation (1/2, 1/4)
    mean_hat = (0.5 + np.cumsum(x, axis=1)) / (t + 1)
    var_hat = (0.25 + np.cumsum((x - mean_hat) ** 2, axis=1)) / (t + 1)
    var_prev = np.concatenate([np.full((x.shape[0], 1), 0.25), var_hat[:, :-1]], axis=1)
    horizon = planned_clusters(population) if bets == "planned" else t * np.log(1 + t)
    log_term = math.log(2 / alpha) if sides == "joint" else math.log(1 / alpha)
    bet = np.sqrt(2 * log_term / (var_prev * horizon))
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.minimum(bet, truncation / mu)
        down = np.minimum(bet, truncation / (1 - mu))
        capital_up = np.exp(np.cumsum(np.log1p(up * (x - mu)), axis=1))
        capital_down = np.exp(np.cumsum(np.log1p(-down * (x - mu)), axis=1))
    impossible = np.maximum.accumulate((mu < 0) | (mu > 1), axis=1)  # no such population: θ is ruled out
    for capital in (capital_up, capital_down):
        capital[impossible | np.isnan(capital)] = np.inf
    return capital_up, capital_down


def confidence_sequence(scores: np.ndarray, sizes: np.ndarray, population_sizes: np.ndarray, *,
                        denominators: np.ndarray | None = None, alpha: float = 0.05,
                        breaks: int = 1000, bets: str = "planned", sides: str = "joint",
                        truncation: float = TRUNCATION) -> Sequence:
    """The (1 − alpha) confidence sequence for Σ y / Σ m over the population, after each asked cluster.

    `scores[i]` (y_i) and `sizes[i]` (m_i) are the i-th asked cluster's units correct (a fraction of a unit
    allowed) and units, in the order asked; `population_sizes` lists the units of every cluster of the
    population, asked or not (its order does not matter). The order of asking must be uniformly random
    (a seeded shuffle) for the guarantee to hold. `breaks` sets the grid of candidate values (step
    1/breaks). `bets` is "planned" or "plugin" (module docstring). `sides` "joint" (the default) holds the
    whole interval with probability 1 − alpha (hedged capital: half of each side's must pass 1/alpha);
    "each" holds the lower bound alone, and the upper bound alone, with probability 1 − alpha (each
    side's capital against 1/alpha: together a 1 − 2 alpha interval, what a one-sided decision such as
    the gate's needs). `truncation` (c in (0, 1)) caps the bets at c times the largest that keeps the
    capital positive whatever the next cluster gives.

    `denominators[i]` (a_i, 0 <= y_i <= a_i <= m_i; default m_i) makes the quantity Σ y / Σ a, a ratio
    whose denominator is known only for the asked clusters (accuracy over the units answered right or
    wrong): x_i(θ) = θ + (y_i − θ a_i) / m_max still lies in [0, 1] and has population mean θ exactly
    when θ = Σ y / Σ a, so the same betting applies; the logical range then puts every unit not yet asked
    in the denominator, all wrong or all right."""
    scores, sizes = np.asarray(scores, dtype=float), np.asarray(sizes, dtype=float)
    population_sizes = np.asarray(population_sizes, dtype=float)
    den = sizes if denominators is None else np.asarray(denominators, dtype=float)
    _check(scores, sizes, population_sizes, alpha)
    if bets not in BETS:
        raise ValueError(f"bets must be one of {BETS}, got {bets!r}")
    if sides not in SIDES:
        raise ValueError(f"sides must be one of {SIDES}, got {sides!r}")
    if not 0 < truncation < 1:
        raise ValueError(f"truncation must lie in (0, 1), got {truncation}")
    if den.shape != sizes.shape or np.any(den < scores - 1e-12) or np.any(den > sizes + 1e-12):
        raise ValueError("a cluster's denominator must lie between its score and its number of units")
    n = population_sizes.size
    total = float(population_sizes.sum())
    m_max = float(population_sizes.max())
    grid = np.linspace(0.0, 1.0, breaks + 1)
    left = total - np.cumsum(sizes)  # units not yet asked
    counted = np.cumsum(den)
    correct = np.cumsum(scores)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = correct / counted
    if scores.size == 0:
        empty = np.zeros(0)
        return Sequence(empty, empty, empty, alpha, n)
    x = grid[:, None] + (scores[None, :] - grid[:, None] * den[None, :]) / m_max
    capital_up, capital_down = _capital(x, grid, n, alpha, bets, truncation, sides)
    if sides == "joint":
        kept_low = kept_high = 0.5 * capital_up + 0.5 * capital_down < 1 / alpha
    else:  # the lower bound from the bets on "above" alone, the upper from those on "below"
        kept_low, kept_high = capital_up < 1 / alpha, capital_down < 1 / alpha
    step = 1.0 / breaks
    first = np.where(kept_low.any(axis=0), grid[np.argmax(kept_low, axis=0)], 0.0)
    last = np.where(kept_high.any(axis=0), grid[breaks - np.argmax(kept_high[::-1], axis=0)], 1.0)
    lower = np.maximum(first - step, 0.0)
    upper = np.minimum(last + step, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.maximum(lower, np.nan_to_num(correct / (counted + left)))  # the units not yet asked all wrong
        upper = np.minimum(upper, np.nan_to_num((correct + left) / (counted + left), nan=1.0))  # ... all right
    lower = np.maximum.accumulate(lower)
    upper = np.minimum.accumulate(upper)
    return Sequence(estimate, lower, np.maximum(upper, lower), alpha, n)


def paired_sequence(new: np.ndarray, base: np.ndarray, sizes: np.ndarray, population_sizes: np.ndarray, *,
                    alpha: float = 0.05, breaks: int = 2000, bets: str = "planned", sides: str = "joint",
                    truncation: float = TRUNCATION) -> Sequence:
    """The confidence sequence for the difference new − base in unit-weighted accuracy, from each asked
    cluster's units correct under each target (the same units for both): the difference y_new − y_base
    in [−m, m] is moved to [0, m] and the ratio's sequence mapped back to [−1, 1]."""
    new, base = np.asarray(new, dtype=float), np.asarray(base, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    shifted = confidence_sequence((new - base + sizes) / 2, sizes, population_sizes, alpha=alpha, breaks=breaks,
                                  bets=bets, sides=sides, truncation=truncation)
    return Sequence(2 * shifted.estimate - 1, 2 * shifted.lower - 1, 2 * shifted.upper - 1, alpha,
                    shifted.population)


GateOutcome = str
"""One of "not worse", "equivalent" (within ± margin), "worse", "undecided"."""


@dataclass(frozen=True)
class SequentialGate:
    """The sequential gate's decision: the outcome, the clusters asked when it was reached (all asked when
    undecided), and the difference's interval there."""

    outcome: GateOutcome
    clusters: int
    population: int
    estimate: float
    lower: float
    upper: float
    margin: float
    alpha: float
    scheme: str = "one-sided"
    """How the bounds hold (`GATES`): "one-sided", each alone at 1 − alpha; "two-sided", both together."""


def gate_outcome(lower: float, upper: float, margin: float) -> GateOutcome:
    """What an interval for new − base says against the margin: "worse" when it lies below −margin,
    "equivalent" when inside (−margin, margin), "not worse" when above −margin, else "undecided"."""
    if upper < -margin:
        return "worse"
    if lower > -margin:
        return "equivalent" if upper < margin else "not worse"
    return "undecided"


def sequential_gate(new: np.ndarray, base: np.ndarray, sizes: np.ndarray, population_sizes: np.ndarray, *,
                    margin: float, alpha: float = 0.05, bets: str = "planned",
                    scheme: str = "one-sided") -> SequentialGate:
    """The paired sequential gate: ask clusters in the given (random) order and stop at the first one after
    which the difference's confidence sequence decides against the margin. Either wrong call (declaring
    "worse" when new is within the margin, or "not worse" or "equivalent" when it is worse by the margin
    or more; "equivalent" when it is better by the margin or more) has probability at most alpha, at
    whatever cluster it stops: each call rests on one bound, and under `scheme` "one-sided" (`GATES`)
    each bound alone holds with probability 1 − alpha, under "two-sided" both together."""
    if not 0 < margin < 1:
        raise ValueError(f"margin must lie in (0, 1), got {margin}")
    if scheme not in GATES:
        raise ValueError(f"scheme must be one of {tuple(GATES)}, got {scheme!r}")
    sides, truncation = GATES[scheme]
    seq = paired_sequence(new, base, sizes, population_sizes, alpha=alpha, bets=bets, sides=sides,
                          truncation=truncation)
    for i in range(seq.lower.size):
        outcome = gate_outcome(float(seq.lower[i]), float(seq.upper[i]), margin)
        if outcome != "undecided":
            return SequentialGate(outcome, i + 1, seq.population, float(seq.estimate[i]), float(seq.lower[i]),
                                  float(seq.upper[i]), margin, alpha, scheme)
    last = seq.lower.size - 1
    if last < 0:
        return SequentialGate("undecided", 0, seq.population, float("nan"), -1.0, 1.0, margin, alpha, scheme)
    return SequentialGate("undecided", last + 1, seq.population, float(seq.estimate[last]), float(seq.lower[last]),
                          float(seq.upper[last]), margin, alpha, scheme)
