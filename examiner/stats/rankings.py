"""Elo and Bradley-Terry ratings with bootstrap intervals over matches, and rank groups.

Why: a rating from a few dozen matches is uncertain because the matches are a sample; replaying one list
in many orders (examiner.meta.ranking.elo's shuffles) shows only how much the order moves an Elo
rating, not how much the sample does. The bootstrap here follows LMSYS FastChat's leaderboard
(fastchat/serve/monitor/elo_analysis.py and rating_systems.py), so intervals mean the same as theirs:

- Elo: each round draws as many matches as there are, with replacement, and plays them in the drawn
  order from 1000 (K = 4, base 10, scale 400); a player no drawn match names has no rating that round;
  the point rating is the median over rounds, the interval the 2.5 and 97.5 percentiles.
- Bradley-Terry: the distinct (a, b, outcome) matches are counted; each round draws new counts from the
  multinomial of the observed shares (numpy's default_rng(seed)), and fits the logistic BT likelihood,
  a tie counting half a win each way, by L-BFGS-B from zero (at most 100 iterations, gradient tolerance
  1e-6); ratings are 400 x the natural-log-10 strengths + 1000 (so the mean rating is 1000). The point
  rating is the fit on the observed counts.

Rank groups: a player's rank is 1 + the number of players whose interval lies wholly above its own (the
LMSYS "rank (UB)"); players with equal rank form a group, which the data cannot order.
Matches are (a, b, outcome) with outcome a Preference (FIRST = a won) or a's score 1, 0.5 or 0 (tuples or
objects with a, b and outcome attributes). Players are numbered in order of first appearance among the
a's, then the b's, as FastChat's pandas.factorize does, so seeded draws coincide with FastChat's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy.special import expit
from threadpoolctl import threadpool_limits

from examiner.core.labels import Preference
from examiner.stats.correlation import Figures

__all__ = [
    "Battles",
    "RatedPlayer",
    "RatingIntervals",
    "battles",
    "elo_online",
    "elo_bootstrap_samples",
    "bradley_terry_fit",
    "bradley_terry_bootstrap_samples",
    "rating_intervals",
    "elo_bootstrap",
    "bradley_terry_bootstrap",
]

_SCORE = {Preference.FIRST: 1.0, Preference.SECOND: 0.0, Preference.TIE: 0.5}


@dataclass(frozen=True)
class Battles:
    """Matches as arrays: players (first-appearance order), a and b as player indices, a's score."""

    players: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    score: np.ndarray

    @property
    def n(self) -> int:
        return int(self.a.size)


def _score(outcome: object) -> float:
    if isinstance(outcome, Preference):
        return _SCORE[outcome]
    if isinstance(outcome, (int, float)) and float(outcome) in (0.0, 0.5, 1.0):
        return float(outcome)
    raise ValueError(f"match outcome {outcome!r} is neither a Preference nor a's score 1, 0.5 or 0")


def battles(matches: Iterable[Any]) -> Battles:
    """Encode matches (tuples (a, b, outcome) or objects with a, b, outcome attributes)."""
    rows = [(m.a, m.b, m.outcome) if hasattr(m, "outcome") else tuple(m) for m in matches]
    if not rows:
        raise ValueError("no matches")
    order: dict[str, int] = {}
    for column in (0, 1):
        for row in rows:
            order.setdefault(str(row[column]), len(order))
    a = np.array([order[str(r[0])] for r in rows], dtype=np.int64)
    b = np.array([order[str(r[1])] for r in rows], dtype=np.int64)
    if np.any(a == b):
        raise ValueError("a match pits a player against itself")
    score = np.array([_score(r[2]) for r in rows])
    return Battles(tuple(order), a, b, score)


def _play(b: Battles, order: np.ndarray, k: float, base: float, scale: float, init: float) -> np.ndarray:
    """Elo over rows of `order` (rounds x steps: match indices), all rounds at once: (rounds, players)."""
    rounds = order.shape[0]
    ratings = np.full((rounds, len(b.players)), init)
    row = np.arange(rounds)
    for step in order.T:
        ia, ib = b.a[step], b.b[step]
        expected = 1.0 / (1.0 + base ** ((ratings[row, ib] - ratings[row, ia]) / scale))
        update = k * (b.score[step] - expected)
        ratings[row, ia] += update
        ratings[row, ib] -= update
    return ratings


def elo_online(matches: Iterable[Any] | Battles, k: float = 4.0, base: float = 10.0, scale: float = 400.0, init: float = 1000.0) -> dict[str, float]:
    """Elo after one pass over the matches in their order (FastChat's compute_elo)."""
    b = matches if isinstance(matches, Battles) else battles(matches)
    final = _play(b, np.arange(b.n)[None, :], k, base, scale, init)[0]
    return dict(zip(b.players, (float(v) for v in final)))


def elo_bootstrap_samples(
    matches: Iterable[Any] | Battles,
    n_rounds: int = 1000,
    seed: int = 0,
    k: float = 4.0,
    base: float = 10.0,
    scale: float = 400.0,
    init: float = 1000.0,
) -> tuple[tuple[str, ...], np.ndarray]:
    """Players and their Elo per bootstrap round (n_rounds, players); nan where a round drew no match of
    the player. Round r plays matches default_rng(seed).integers(0, n, (n_rounds, n))[r] in that order."""
    b = matches if isinstance(matches, Battles) else battles(matches)
    draws = np.random.default_rng(seed).integers(0, b.n, size=(n_rounds, b.n))
    ratings = _play(b, draws, k, base, scale, init)
    present = np.zeros(ratings.shape, dtype=bool)
    rows = np.repeat(np.arange(n_rounds), b.n)
    present[rows, b.a[draws].ravel()] = True
    present[rows, b.b[draws].ravel()] = True
    return b.players, np.where(present, ratings, np.nan)


def _kinds(b: Battles) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (a, b, outcome) matches, sorted as numpy.unique sorts rows, and their counts."""
    rows = np.column_stack([b.a, b.b, np.rint(2 * b.score).astype(np.int64)])
    kinds, counts = np.unique(rows, axis=0, return_counts=True)
    return kinds[:, 0], kinds[:, 1], kinds[:, 2] / 2.0, counts.astype(float)


def _bt_negative_log_likelihood(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, score: np.ndarray, weight: np.ndarray, slope: float, n_players: int
) -> tuple[float, np.ndarray]:
    p_a = expit(slope * (theta[a] - theta[b]))
    value = -float(np.sum(weight * (score * np.log(p_a) + (1.0 - score) * np.log(1.0 - p_a))))
    residual = slope * weight * (score - p_a)
    gradient = np.bincount(b, residual, n_players) - np.bincount(a, residual, n_players)
    return value, gradient


def bradley_terry_fit(
    a: np.ndarray, b: np.ndarray, score: np.ndarray, weight: np.ndarray, n_players: int, base: float = 10.0, tol: float = 1e-6
) -> np.ndarray:
    """Maximum-likelihood BT strengths (natural units, log-base `base`) of weighted distinct matches, by
    L-BFGS-B from zero (100 iterations at most, gradient tolerance `tol`)."""
    result = optimize.minimize(
        _bt_negative_log_likelihood,
        np.zeros(n_players),
        args=(a, b, score, weight, float(np.log(base)), n_players),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 100, "gtol": tol},
    )
    return np.asarray(result.x)


def bradley_terry_bootstrap_samples(
    matches: Iterable[Any] | Battles,
    n_rounds: int = 1000,
    seed: int = 0,
    base: float = 10.0,
    scale: float = 400.0,
    init: float = 1000.0,
    tol: float = 1e-6,
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """Players, the BT rating on the observed matches (players,), and per bootstrap round (n_rounds,
    players): counts of the distinct matches drawn from the multinomial of their shares."""
    b = matches if isinstance(matches, Battles) else battles(matches)
    ka, kb, ks, counts = _kinds(b)
    n_players = len(b.players)
    point = bradley_terry_fit(ka, kb, ks, counts, n_players, base, tol) * scale + init
    draws = np.random.default_rng(seed).multinomial(b.n, counts / counts.sum(), size=n_rounds) / b.n
    # One BLAS thread: each fit is tiny, and L-BFGS-B's threaded BLAS calls cost ~10x the fit itself
    # (1000 rounds of 4 players: 17 s against 0.5 s on two cores); the figures are the same.
    with threadpool_limits(limits=1):
        rounds = np.array([bradley_terry_fit(ka, kb, ks, w, n_players, base, tol) for w in draws]) * scale + init
    return b.players, point, rounds


@dataclass(frozen=True)
class RatedPlayer(Figures):
    """A player's rating with its bootstrap interval and rank (1 + players whose interval lies wholly
    above this one's)."""

    player: str
    rating: float
    low: float
    high: float
    rank: int


@dataclass(frozen=True)
class RatingIntervals(Figures):
    """Ratings best first, rank groups (players the intervals cannot order), and how they were made."""

    system: str
    players: tuple[RatedPlayer, ...]
    groups: tuple[tuple[str, ...], ...]
    n_matches: int
    n_rounds: int
    level: float
    seed: int

    def ranking(self) -> list[str]:
        return [p.player for p in self.players]


def rating_intervals(
    system: str, players: tuple[str, ...], point: np.ndarray, rounds: np.ndarray, level: float, n_matches: int, seed: int
) -> RatingIntervals:
    """Summarise bootstrap rounds (n_rounds, players; nan = absent that round): percentile interval
    (linear interpolation, nan skipped, as pandas' quantile), LMSYS rank and rank groups."""
    low, high = np.nanquantile(rounds, [(1 - level) / 2, (1 + level) / 2], axis=0)
    rank = [1 + int(np.sum(low > high[i])) for i in range(len(players))]
    order = sorted(range(len(players)), key=lambda i: (-point[i], players[i]))
    rated = tuple(RatedPlayer(players[i], float(point[i]), float(low[i]), float(high[i]), rank[i]) for i in order)
    groups: dict[int, list[str]] = {}
    for p in rated:
        groups.setdefault(p.rank, []).append(p.player)
    return RatingIntervals(
        system, rated, tuple(tuple(groups[r]) for r in sorted(groups)), n_matches, int(rounds.shape[0]), level, seed
    )


def elo_bootstrap(
    matches: Iterable[Any], n_rounds: int = 1000, seed: int = 0, level: float = 0.95, k: float = 4.0
) -> RatingIntervals:
    """Elo with FastChat's bootstrap over matches: median rating over rounds, percentile interval."""
    b = battles(matches)
    players, rounds = elo_bootstrap_samples(b, n_rounds, seed, k=k)
    return rating_intervals(f"elo (K={k:g})", players, np.nanmedian(rounds, axis=0), rounds, level, b.n, seed)


def bradley_terry_bootstrap(matches: Iterable[Any], n_rounds: int = 1000, seed: int = 0, level: float = 0.95) -> RatingIntervals:
    """Bradley-Terry with FastChat's multinomial bootstrap over matches: the fit on the observed matches,
    percentile interval over rounds."""
    b = battles(matches)
    players, point, rounds = bradley_terry_bootstrap_samples(b, n_rounds, seed)
    return rating_intervals("bradley-terry", players, point, rounds, level, b.n, seed)
