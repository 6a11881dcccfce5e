"""Rank evaluators from pairwise meta-verdicts: win rates, Elo over shuffles, Bradley-Terry, agreement.

Input everywhere is a list of matches `(evaluator_a, evaluator_b, outcome)` whose outcome is a
`Preference`: FIRST (a won), SECOND (b won) or TIE (`Match` or plain tuples). A meta-evaluator (JDEval, MDEval) produces one match per
(item, pair of evaluators) it compares; docs/METHODS.md section 5 turns those into a ranking that should agree
with the baseline ranking (accuracy against gold).

- Win rate keeps ties explicit: winrate(i/j) = wins_i / matches_ij, so
  winrate(i/j) + winrate(j/i) = 1 - ties_ij / matches_ij exactly (kept as Fractions).
- Elo is order dependent, so it is run over many seeded shuffles of the match list at once
  (vectorised: shuffle s processes match perm[s, t] at step t) and reported as mean and match-order
  spread: how much the order alone moves a rating, not an interval (the matches are not resampled).
- Intervals over matches (`rating_intervals`): Elo and Bradley-Terry with FastChat's bootstrap and the
  rank groups they give (examiner.stats.rankings), and each evaluator's overall win rate with the
  accuracy interval of examiner.stats.intervals, its matches grouped by item.
- Bradley-Terry is the order-free model Elo approximates; fitted by minorise-maximise with ties as half
  a win to each side, with a bootstrap over matches for intervals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Generic, TypeVar

import numpy as np

from examiner.core.labels import Preference
from examiner.stats import rankings
from examiner.stats.correlation import Figures, kendall, percentile_interval, spearman
from examiner.stats.intervals import accuracy_interval

__all__ = [
    "Match",
    "Outcome",
    "WinRates",
    "EloRating",
    "EloResult",
    "BTRating",
    "BTResult",
    "RankingAgreement",
    "win_rates",
    "elo",
    "elo_in_order",
    "bradley_terry",
    "ranking_agreement",
    "rating_intervals",
    "win_rate_intervals",
]

Outcome = Preference

_SCORE_OF_A = {Preference.FIRST: 1.0, Preference.SECOND: 0.0, Preference.TIE: 0.5}


@dataclass(frozen=True)
class Match:
    """One meta-verdict: which of two evaluators did better on one item (or a tie); `item` names the item
    where known (the win-rate intervals group matches by it)."""

    a: str
    b: str
    outcome: Outcome
    item: str | None = None


MatchLike = Match | tuple[str, str, Preference]


def _score_of(outcome: object) -> float:
    """a's score S_a: 1 for a win, 0.5 for a tie, 0 for a loss."""
    if not isinstance(outcome, Preference):
        raise ValueError(f"unknown match outcome {outcome!r}; expected a Preference (FIRST, SECOND or TIE)")
    return _SCORE_OF_A[outcome]


def _encode(
    matches: Iterable[MatchLike], players: Sequence[str] | None
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """Players (sorted unless given), index arrays of a and b, and a's score S_a in {1, .5, 0}."""
    rows = [(m.a, m.b, m.outcome) if isinstance(m, Match) else tuple(m) for m in matches]
    names = tuple(players) if players is not None else tuple(sorted({r[0] for r in rows} | {r[1] for r in rows}))
    pos = {p: i for i, p in enumerate(names)}
    if len(pos) != len(names):
        raise ValueError("players must be unique")
    a = np.empty(len(rows), dtype=np.int64)
    b = np.empty(len(rows), dtype=np.int64)
    s = np.empty(len(rows), dtype=float)
    for t, (pa, pb, out) in enumerate(rows):
        if pa not in pos or pb not in pos:
            raise ValueError(f"match {t} names a player not in players: {pa!r} vs {pb!r}")
        if pa == pb:
            raise ValueError(f"match {t} pits {pa!r} against itself")
        a[t], b[t], s[t] = pos[pa], pos[pb], _score_of(out)
    return names, a, b, s


# ----------------------------------------------------------------------------------------------
# Win rates
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WinRates:
    """Pairwise counts; wins[i][j] = matches i won against j, ties[i][j] = ties between them."""

    players: tuple[str, ...]
    wins: tuple[tuple[int, ...], ...]
    ties: tuple[tuple[int, ...], ...]

    def _ix(self, p: str) -> int:
        return self.players.index(p)

    def matches(self, i: str, j: str) -> int:
        a, b = self._ix(i), self._ix(j)
        return self.wins[a][b] + self.wins[b][a] + self.ties[a][b]

    def rate(self, i: str, j: str) -> Fraction | None:
        """Exact win rate of i over j (None when they never met)."""
        m = self.matches(i, j)
        return Fraction(self.wins[self._ix(i)][self._ix(j)], m) if m else None

    def tie_rate(self, i: str, j: str) -> Fraction | None:
        m = self.matches(i, j)
        return Fraction(self.ties[self._ix(i)][self._ix(j)], m) if m else None

    def overall(self, i: str) -> Fraction | None:
        """Wins of i over all its matches (ties count as matches, not wins)."""
        a = self._ix(i)
        total = sum(self.matches(i, j) for j in self.players if j != i)
        return Fraction(sum(self.wins[a]), total) if total else None

    def matrix(self) -> np.ndarray:
        """Float matrix M[i, j] = winrate(i/j); nan on the diagonal and for pairs that never met."""
        n = len(self.players)
        out = np.full((n, n), np.nan)
        for i, pi in enumerate(self.players):
            for j, pj in enumerate(self.players):
                r = self.rate(pi, pj) if i != j else None
                if r is not None:
                    out[i, j] = float(r)
        return out

    def to_dict(self) -> dict[str, Any]:
        def _f(x: Fraction | None) -> float | None:
            return None if x is None else float(x)

        return {
            "players": list(self.players),
            "win_rate": {pi: {pj: _f(self.rate(pi, pj)) for pj in self.players if pj != pi} for pi in self.players},
            "tie_rate": {pi: {pj: _f(self.tie_rate(pi, pj)) for pj in self.players if pj != pi} for pi in self.players},
            "overall_win_rate": {p: _f(self.overall(p)) for p in self.players},
            "wins": [list(r) for r in self.wins],
            "ties": [list(r) for r in self.ties],
        }


def win_rates(matches: Iterable[MatchLike], players: Sequence[str] | None = None) -> WinRates:
    """Count wins and ties per ordered pair; rates are exact Fractions of those counts."""
    names, a, b, s = _encode(matches, players)
    n = len(names)
    wins = np.zeros((n, n), dtype=np.int64)
    ties = np.zeros((n, n), dtype=np.int64)
    np.add.at(wins, (a[s == 1.0], b[s == 1.0]), 1)
    np.add.at(wins, (b[s == 0.0], a[s == 0.0]), 1)
    np.add.at(ties, (a[s == 0.5], b[s == 0.5]), 1)
    ties = ties + ties.T
    return WinRates(
        names,
        tuple(tuple(int(v) for v in r) for r in wins),
        tuple(tuple(int(v) for v in r) for r in ties),
    )


# ----------------------------------------------------------------------------------------------
# Elo
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EloRating(Figures):
    """Mean Elo over shuffles, with its spread across shuffles (std with ddof=0, min, max)."""

    player: str
    mean: float
    std: float
    min: float
    max: float


R = TypeVar("R", "EloRating", "BTRating")


@dataclass(frozen=True)
class _Ratings(Generic[R]):
    """What Elo and Bradley-Terry results share: one rating per player, best first, from n_matches."""

    ratings: tuple[R, ...]
    n_matches: int

    def ranking(self) -> list[str]:
        return [r.player for r in self.ratings]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ratings"] = [r.to_dict() for r in self.ratings]
        return d


@dataclass(frozen=True)
class EloResult(_Ratings[EloRating]):
    """Ratings sorted best first, and the settings that produced them."""

    n_shuffles: int
    k: float
    start: float
    seed: int

    def scores(self) -> dict[str, float]:
        return {r.player: r.mean for r in self.ratings}


def _run_elo(perms: np.ndarray, a: np.ndarray, b: np.ndarray, s: np.ndarray, n: int, k: float, start: float) -> np.ndarray:
    """Play every row of `perms` as one match order, all rows in lock-step; returns ratings (rows, n).

    Ratings live in one flat array (row-major, shuffle x player). At step t, shuffle r plays match
    perms[r, t]; indices within a step are distinct (one per shuffle), so fancy-index += is safe.
    """
    n_rows, n_steps = perms.shape
    base = (np.arange(n_rows, dtype=np.int64) * n)[None, :]
    fa = np.ascontiguousarray(a[perms].T) + base  # (T, rows) flat index of player a
    fb = np.ascontiguousarray(b[perms].T) + base
    sa = np.ascontiguousarray(s[perms].T)
    ratings = np.full(n_rows * n, float(start))
    for t in range(n_steps):
        ia, ib = fa[t], fb[t]
        ra, rb = ratings[ia], ratings[ib]
        expected_a = 1.0 / (1.0 + np.power(10.0, (rb - ra) / 400.0))
        delta = k * (sa[t] - expected_a)
        ratings[ia] = ra + delta
        ratings[ib] = rb - delta
    return ratings.reshape(n_rows, n)


def elo_in_order(
    matches: Iterable[MatchLike], k: float = 4.0, start: float = 1000.0, players: Sequence[str] | None = None
) -> dict[str, float]:
    """Elo after one pass over the matches in the given order (no shuffling)."""
    names, a, b, s = _encode(matches, players)
    perms = np.arange(len(a), dtype=np.int64)[None, :]
    final = _run_elo(perms, a, b, s, len(names), k, start)[0]
    return {p: float(r) for p, r in zip(names, final)}


def elo(
    matches: Iterable[MatchLike],
    n_shuffles: int = 200,
    seed: int = 0,
    k: float = 4.0,
    start: float = 1000.0,
    players: Sequence[str] | None = None,
) -> EloResult:
    """Elo (docs/METHODS.md section 5: K=4, start 1000) averaged over seeded shuffles of the match list.

    Why shuffles: a single pass depends on match order; the mean over 200 shuffles is stable to a
    point or two, and the spread across shuffles shows how much order alone moves a rating.
    """
    if n_shuffles < 1:
        raise ValueError("n_shuffles must be >= 1")
    names, a, b, s = _encode(matches, players)
    rng = np.random.default_rng(seed)
    perms = rng.permuted(np.tile(np.arange(len(a), dtype=np.int64), (n_shuffles, 1)), axis=1)
    final = _run_elo(perms, a, b, s, len(names), k, start)
    mean, std, lo, hi = final.mean(0), final.std(0), final.min(0), final.max(0)
    order = sorted(range(len(names)), key=lambda i: (-mean[i], names[i]))
    ratings = tuple(EloRating(names[i], float(mean[i]), float(std[i]), float(lo[i]), float(hi[i])) for i in order)
    return EloResult(ratings, len(a), n_shuffles, float(k), float(start), seed)


# ----------------------------------------------------------------------------------------------
# Bradley-Terry
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BTRating(Figures):
    """Strength (normalised to sum 1 over players) and Elo-like rating, each with a bootstrap interval."""

    player: str
    strength: float
    strength_low: float
    strength_high: float
    rating: float
    rating_low: float
    rating_high: float


@dataclass(frozen=True)
class BTResult(_Ratings["BTRating"]):
    """Bradley-Terry fit, best first. rating = 400*log10(strength), shifted so the mean rating is `anchor`
    (1000, the Elo start, so the two scales line up: P(i beats j) = 1/(1+10^((R_j-R_i)/400)))."""

    n_bootstrap: int
    alpha: float
    prior: float
    anchor: float
    seed: int
    iterations: int

    def scores(self) -> dict[str, float]:
        return {r.player: r.rating for r in self.ratings}


def _connected(n: int, a: np.ndarray, b: np.ndarray) -> bool:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in zip(a.tolist(), b.tolist()):
        parent[find(i)] = find(j)
    return len({find(i) for i in range(n)}) == 1


def _fit_mm(w: np.ndarray, max_iter: int, tol: float) -> tuple[np.ndarray, int]:
    """Minorise-maximise (Hunter 2004) for a batch of win matrices w (B, n, n); returns log-strengths.

    w[b, i, j] = (possibly fractional) wins of i over j. Update: p_i <- W_i / sum_j N_ij / (p_i + p_j),
    then centre log p (the model is invariant to scale). A player with W_i = 0 gets log p = -inf.
    """
    n_games = w + np.swapaxes(w, 1, 2)
    total_wins = w.sum(axis=2)
    log_p = np.zeros(total_wins.shape)
    it = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_w = np.log(total_wins)
        for it in range(1, max_iter + 1):  # noqa: B007 - the count of iterations is returned
            p = np.exp(log_p)
            pair_sum = p[:, :, None] + p[:, None, :]
            ratio = np.divide(n_games, pair_sum, out=np.zeros_like(n_games), where=n_games > 0)
            new = log_w - np.log(ratio.sum(axis=2))
            finite = np.isfinite(new)
            centre = np.where(finite, new, 0.0).sum(1, keepdims=True) / np.maximum(finite.sum(1, keepdims=True), 1)
            new = new - centre
            change = np.where(finite, np.abs(new - log_p), 0.0)
            log_p = new
            if change.max() < tol:
                break
    return log_p, it


def bradley_terry(
    matches: Iterable[MatchLike],
    n_bootstrap: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    prior: float = 0.1,
    anchor: float = 1000.0,
    players: Sequence[str] | None = None,
    max_iter: int = 10_000,
    tol: float = 1e-10,
) -> BTResult:
    """Fit P(i beats j) = p_i / (p_i + p_j) by MM; ties count as half a win to each side.

    `prior` adds that many pseudo-matches ending in a tie to every pair that actually met. It keeps the
    fit finite when a player never wins (or never loses) in a bootstrap resample; its pull vanishes as
    matches accumulate. prior=0 gives the plain maximum-likelihood fit.
    Intervals: percentile bootstrap over matches (resample the match list with replacement, seeded),
    computed in one vectorised batch by resampling counts of distinct (a, b, outcome) matches.
    """
    names, a, b, s = _encode(matches, players)
    n, t = len(names), len(a)
    if t == 0:
        raise ValueError("bradley_terry needs at least one match")
    if not _connected(n, a, b):
        raise ValueError("the comparison graph is not connected: strengths are not comparable across parts")
    # distinct match kinds and their counts; each kind adds a fixed pattern to the win matrix
    code = (a * n + b) * 3 + (2 * s).astype(np.int64)  # outcome 0 (b won), 1 (tie), 2 (a won)
    kinds, counts = np.unique(code, return_counts=True)
    ka, kb, ko = kinds // 3 // n, kinds // 3 % n, kinds % 3
    pattern = np.zeros((len(kinds), n * n))
    pattern[np.arange(len(kinds)), ka * n + kb] += ko / 2.0  # a's share: 1, .5 or 0
    pattern[np.arange(len(kinds)), kb * n + ka] += 1.0 - ko / 2.0
    met = np.zeros((n, n))
    met[ka, kb] = met[kb, ka] = 1.0
    smoothing = (prior / 2.0) * met

    def fit(count_matrix: np.ndarray) -> tuple[np.ndarray, int]:
        w = (count_matrix @ pattern).reshape(-1, n, n) + smoothing
        return _fit_mm(w, max_iter, tol)

    log_p, iterations = fit(counts[None, :].astype(float))
    rng = np.random.default_rng(seed)
    boot_counts = rng.multinomial(t, counts / t, size=n_bootstrap).astype(float)
    boot_log_p, _ = fit(boot_counts)

    def to_rating(lp: np.ndarray) -> np.ndarray:
        r = 400.0 * lp / np.log(10.0)
        finite = np.isfinite(r)
        centre = np.where(finite, r, 0.0).sum(-1, keepdims=True) / np.maximum(finite.sum(-1, keepdims=True), 1)
        return r - centre + anchor

    def to_strength(lp: np.ndarray) -> np.ndarray:
        shifted = np.exp(lp - np.max(lp, axis=-1, keepdims=True))
        return shifted / shifted.sum(axis=-1, keepdims=True)

    rating, strength = to_rating(log_p)[0], to_strength(log_p)[0]
    with np.errstate(invalid="ignore"):  # prior=0: a winless resample gives -inf, an interval end may be nan
        r_lo, r_hi = percentile_interval(to_rating(boot_log_p), alpha, axis=0)
        s_lo, s_hi = percentile_interval(to_strength(boot_log_p), alpha, axis=0)
    order = sorted(range(n), key=lambda i: (-rating[i], names[i]))
    ratings = tuple(
        BTRating(
            names[i], float(strength[i]), float(s_lo[i]), float(s_hi[i]),
            float(rating[i]), float(r_lo[i]), float(r_hi[i]),
        )
        for i in order
    )
    return BTResult(ratings, t, n_bootstrap, alpha, prior, anchor, seed, iterations)


# ----------------------------------------------------------------------------------------------
# Agreement with a baseline ranking
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankingAgreement:
    """How well a ranking reproduces a baseline ranking over the players both name."""

    kendall_tau: float
    spearman_rho: float
    top1_match: bool
    n: int
    players: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["players"] = list(self.players)
        return d


def _as_scores(r: Mapping[str, float] | Sequence[str]) -> dict[str, float]:
    """Scores (higher = better) as given, or a best-first list turned into scores -position."""
    if isinstance(r, Mapping):
        return {str(k): float(v) for k, v in r.items()}
    return {p: -float(i) for i, p in enumerate(r)}


def ranking_agreement(
    ranking: Mapping[str, float] | Sequence[str], baseline: Mapping[str, float] | Sequence[str]
) -> RankingAgreement:
    """Kendall tau-b, Spearman rho and top-1 match between two rankings.

    Each ranking is either a score mapping (higher = better, e.g. Elo means or accuracies) or a list
    ordered best first. Only players present in both are compared. top1_match is true when a
    top-scored player of `ranking` is also a top-scored player of `baseline` (ties at the top allowed).
    """
    x, y = _as_scores(ranking), _as_scores(baseline)
    common = tuple(p for p in y if p in x)
    if len(common) < 2:
        raise ValueError("need at least two players present in both rankings")
    xv = np.array([x[p] for p in common])
    yv = np.array([y[p] for p in common])
    tau, rho = kendall(xv, yv), spearman(xv, yv)  # nan when either ranking is constant
    top_x = {p for p, v in zip(common, xv) if v == xv.max()}
    top_y = {p for p, v in zip(common, yv) if v == yv.max()}
    return RankingAgreement(tau, rho, bool(top_x & top_y), len(common), common)


# ----------------------------------------------------------------------------------------------
# Intervals over matches
# ----------------------------------------------------------------------------------------------


def rating_intervals(matches: Sequence[MatchLike], n_rounds: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Elo and Bradley-Terry with FastChat's bootstrap over matches, each with LMSYS rank groups
    (examiner.stats.rankings); Bradley-Terry only when the comparison graph is connected (across parts
    strengths are not comparable), else `bradley_terry_error` says why."""
    rows: list[tuple[str, str, Preference]] = [
        (m.a, m.b, m.outcome) if isinstance(m, Match) else (m[0], m[1], m[2]) for m in matches]
    out: dict[str, Any] = {"elo": rankings.elo_bootstrap(rows, n_rounds=n_rounds, seed=seed).to_dict()}
    names, a, b, _ = _encode(rows, None)
    if _connected(len(names), a, b):
        out["bradley_terry"] = rankings.bradley_terry_bootstrap(rows, n_rounds=n_rounds, seed=seed).to_dict()
    else:
        out["bradley_terry_error"] = "the comparison graph is not connected: strengths are not comparable across parts"
    return out


def win_rate_intervals(
    matches: Sequence[MatchLike], items: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each player's overall win rate (wins / matches, ties count as matches) with its 95 % interval:
    examiner.stats.intervals.accuracy_interval over the player's matches grouped by item (one item's
    matches share its difficulty): the Wilson interval with design effect at every number of items.
    Items come from `items` or each Match's `item`; a match with neither is its own group."""
    matches = list(matches)
    names, a, b, s = _encode(matches, None)
    if items is None:
        items = [m.item if isinstance(m, Match) and m.item is not None else f"match:{t}" for t, m in enumerate(matches)]
    groups = list(items)
    if len(groups) != len(a):
        raise ValueError(f"{len(a)} matches but {len(groups)} item ids")
    out: dict[str, dict[str, Any]] = {}
    for i, player in enumerate(names):
        mine = np.flatnonzero((a == i) | (b == i))
        won = [int((a[t] == i and s[t] == 1.0) or (b[t] == i and s[t] == 0.0)) for t in mine]
        est = accuracy_interval(won, [groups[t] for t in mine])
        out[player] = {"value": est.estimate, "low": est.low, "high": est.high, "method": est.method,
                       "small_sample": est.small_sample, "matches": est.n_units, "groups": est.n_groups}
    return out
