"""Elo and Bradley-Terry with bootstrap intervals over matches, and rank groups."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.core.labels import Preference
from examiner.meta.ranking import Match, bradley_terry, elo_in_order
from examiner.stats.rankings import (
    battles,
    bradley_terry_bootstrap,
    bradley_terry_bootstrap_samples,
    elo_bootstrap,
    elo_bootstrap_samples,
    elo_online,
)


def matches(seed: int, strengths: dict[str, float], n: int) -> list[tuple[str, str, Preference]]:
    rng = np.random.default_rng(seed)
    names = list(strengths)
    out = []
    for _ in range(n):
        x, y = rng.choice(len(names), size=2, replace=False)
        p = 1 / (1 + 10 ** ((strengths[names[y]] - strengths[names[x]]) / 400))
        out.append((names[x], names[y], Preference.FIRST if rng.random() < p else Preference.SECOND))
    return out


def test_players_are_numbered_as_fastchat_factorizes_them() -> None:
    b = battles([("x", "y", 1.0), ("z", "x", Preference.TIE), ("w", "q", 0)])
    assert b.players == ("x", "z", "w", "y", "q")  # the a's first, then the b's
    assert b.score.tolist() == [1.0, 0.5, 0.0]
    with pytest.raises(ValueError):
        battles([("x", "x", 1.0)])
    with pytest.raises(ValueError):
        battles([("x", "y", 0.7)])


def test_online_elo_equals_the_projects_elo_in_the_same_order() -> None:
    games = matches(0, {"a": 1200, "b": 1000, "c": 900}, 80)
    ours = elo_online(games)
    theirs = elo_in_order([Match(*g) for g in games])
    assert ours == pytest.approx(theirs)


def test_bootstrap_elo_is_seeded_and_marks_absent_players() -> None:
    games = matches(1, {"a": 1100, "b": 1000}, 30) + [("a", "rare", Preference.FIRST)]
    players, rounds = elo_bootstrap_samples(games, n_rounds=200, seed=4)
    again = elo_bootstrap_samples(games, n_rounds=200, seed=4)[1]
    assert np.array_equal(rounds, again, equal_nan=True)
    rare = players.index("rare")
    assert np.isnan(rounds[:, rare]).any()  # rounds that drew no match of the rare player
    assert not np.isnan(rounds[:, players.index("a")]).any()


def test_bootstrap_interval_is_wider_than_the_match_order_spread() -> None:
    games = matches(2, {"a": 1100, "b": 1000, "c": 950}, 60)
    result = elo_bootstrap(games, n_rounds=300)
    for p in result.players:
        assert p.low < p.rating < p.high
    assert result.n_matches == 60 and result.n_rounds == 300


def test_rank_groups_split_clear_differences_and_keep_ties_together() -> None:
    games = matches(3, {"strong": 1400, "mid-1": 1000, "mid-2": 1000, "weak": 600}, 600)
    result = bradley_terry_bootstrap(games, n_rounds=200)
    assert result.ranking()[0] == "strong" and result.ranking()[-1] == "weak"
    assert result.groups[0] == ("strong",)
    assert set(result.groups[1]) == {"mid-1", "mid-2"}
    assert result.groups[-1] == ("weak",)
    ranks = {p.player: p.rank for p in result.players}
    assert ranks == {"strong": 1, "mid-1": 2, "mid-2": 2, "weak": 4}


def test_bradley_terry_point_fit_is_the_maximum_likelihood_one() -> None:
    games = matches(4, {"a": 1150, "b": 1000, "c": 900, "d": 850}, 400)
    players, point, rounds = bradley_terry_bootstrap_samples(games, n_rounds=50)
    mle = bradley_terry([Match(*g) for g in games], n_bootstrap=10, prior=0.0).scores()
    for player, rating in zip(players, point):
        assert rating == pytest.approx(mle[player], abs=0.05)
    assert point.mean() == pytest.approx(1000.0)
    assert rounds.shape == (50, 4)
