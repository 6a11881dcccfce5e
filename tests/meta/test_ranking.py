"""Win rates, Elo over shuffles, Bradley-Terry and ranking agreement (docs/METHODS.md section 5)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from examiner.core.labels import Preference
from examiner.meta.ranking import (
    Match,
    bradley_terry,
    elo,
    elo_in_order,
    ranking_agreement,
    win_rates,
)

A_WINS, B_WINS, TIE = Preference.FIRST, Preference.SECOND, Preference.TIE


def _synthetic(strengths: dict[str, float], n: int, seed: int, tie_p: float = 0.0) -> list[tuple[str, str, Preference]]:
    """Matches drawn from a Bradley-Terry model (with an optional fixed tie probability)."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    out = []
    for _ in range(n):
        i, j = rng.choice(len(names), size=2, replace=False)
        a, b = names[i], names[j]
        p_a = (1 - tie_p) * strengths[a] / (strengths[a] + strengths[b])
        u = rng.random()
        out.append((a, b, A_WINS if u < p_a else (TIE if u < p_a + tie_p else B_WINS)))
    return out


def test_win_rate_identity_is_exact():
    matches = _synthetic({"x": 1, "y": 2, "z": 3}, 301, seed=4, tie_p=0.2)
    w = win_rates(matches)
    for i in w.players:
        for j in w.players:
            if i == j:
                continue
            m = w.matches(i, j)
            ties = w.ties[w.players.index(i)][w.players.index(j)]
            assert w.rate(i, j) + w.rate(j, i) == 1 - Fraction(ties, m)
            assert isinstance(w.rate(i, j), Fraction)
    assert sum(w.matches(i, j) for i in w.players for j in w.players if i < j) == 301
    json.dumps(w.to_dict(), allow_nan=False)


def test_win_rates_count_by_hand():
    w = win_rates([("a", "b", A_WINS), ("b", "a", A_WINS), ("a", "b", TIE), Match("a", "c", B_WINS)])
    # a-b: a won once, b won once, one tie
    assert w.rate("a", "b") == Fraction(1, 3) and w.rate("b", "a") == Fraction(1, 3)
    assert w.tie_rate("a", "b") == Fraction(1, 3)
    assert w.rate("c", "a") == 1 and w.rate("b", "c") is None
    assert np.isnan(w.matrix()[1, 2])


def test_elo_three_matches_by_hand():
    # K = 4, start 1000, E_i = 1 / (1 + 10^((R_j - R_i)/400)).
    # 1) A beats B: E_A = 0.5 -> A = 1000 + 4*(1 - 0.5) = 1002, B = 998.
    # 2) B ties C: E_B = 1/(1 + 10^(2/400)) = 0.4971218 -> B += 4*(0.5 - 0.4971218) = +0.0115128
    #    B = 998.0115128, C = 999.9884872.
    # 3) C vs A, A wins ("b"): E_C = 1/(1 + 10^((1002 - 999.9884872)/400)) = 0.4971052
    #    C += 4*(0 - 0.4971052) = -1.9884209 -> C = 998.0000663, A = 1003.9884209.
    r = elo_in_order([("A", "B", A_WINS), ("B", "C", TIE), ("C", "A", B_WINS)])
    assert r["A"] == pytest.approx(1003.9884209, abs=1e-6)
    assert r["B"] == pytest.approx(998.0115128, abs=1e-6)
    assert r["C"] == pytest.approx(998.0000663, abs=1e-6)
    assert sum(r.values()) == pytest.approx(3000.0)  # Elo updates conserve the total


def test_elo_shuffles_report_spread():
    matches = _synthetic({"w": 1, "x": 2, "y": 4}, 400, seed=2, tie_p=0.1)
    res = elo(matches, n_shuffles=50, seed=0)
    assert res.ranking() == ["y", "x", "w"]
    for r in res.ratings:
        assert r.min <= r.mean <= r.max and r.std > 0
    assert sum(res.scores().values()) == pytest.approx(3000.0)
    assert elo(matches, n_shuffles=50, seed=0) == res  # seeded
    json.dumps(res.to_dict(), allow_nan=False)


def test_elo_mean_stabilises_with_more_shuffles():
    matches = _synthetic({"w": 1, "x": 1.5, "y": 2, "z": 3}, 300, seed=9, tie_p=0.1)

    def spread(n_shuffles: int) -> float:
        means = [elo(matches, n_shuffles=n_shuffles, seed=s).scores()["z"] for s in range(12)]
        return float(np.std(means))

    assert spread(400) < 0.5 * spread(10)


def test_bradley_terry_two_players_by_hand():
    # A: 2 wins + 2 ties (= 3 half-win units), B: 0 wins + 2 ties (= 1). MLE p_A / p_B = 3 / 1.
    matches = [("A", "B", A_WINS), ("B", "A", B_WINS), ("A", "B", TIE), ("B", "A", TIE)]
    bt = bradley_terry(matches, n_bootstrap=50, prior=0.0)
    s = {r.player: r for r in bt.ratings}
    assert s["A"].strength / s["B"].strength == pytest.approx(3.0, rel=1e-6)
    assert s["A"].rating - s["B"].rating == pytest.approx(400 * math.log10(3), rel=1e-6)
    assert (s["A"].rating + s["B"].rating) / 2 == pytest.approx(1000.0)


def test_bradley_terry_recovers_known_strengths():
    true = {"a": 1.0, "b": 2.0, "c": 4.0, "d": 8.0}
    bt = bradley_terry(_synthetic(true, 6000, seed=11), n_bootstrap=300, seed=0)
    assert bt.ranking() == ["d", "c", "b", "a"]
    s = {r.player: r.strength for r in bt.ratings}
    assert sum(s.values()) == pytest.approx(1.0)
    for hi, lo in (("b", "a"), ("c", "b"), ("d", "c")):
        assert s[hi] / s[lo] == pytest.approx(2.0, rel=0.15)
    total = sum(true.values())
    for r in bt.ratings:
        assert r.strength_low <= true[r.player] / total <= r.strength_high
        assert r.rating_low <= r.rating <= r.rating_high
    json.dumps(bt.to_dict(), allow_nan=False)


def test_bradley_terry_prior_keeps_winless_player_finite():
    matches = [("A", "B", A_WINS)] * 5 + [("B", "C", A_WINS)] * 5 + [("A", "C", A_WINS)] * 3
    bt = bradley_terry(matches, n_bootstrap=100)
    assert all(math.isfinite(r.rating) and math.isfinite(r.rating_low) for r in bt.ratings)
    assert bt.ranking() == ["A", "B", "C"]


def test_bradley_terry_rejects_disconnected_graph():
    with pytest.raises(ValueError, match="not connected"):
        bradley_terry([("A", "B", A_WINS), ("C", "D", B_WINS)], n_bootstrap=10)


def test_elo_and_bt_agree_on_order():
    true = {"e1": 1, "e2": 1.6, "e3": 2.5, "e4": 4}
    matches = _synthetic(true, 3000, seed=5, tie_p=0.15)
    agreement = ranking_agreement(elo(matches, n_shuffles=100).scores(), bradley_terry(matches, n_bootstrap=100).scores())
    assert agreement.kendall_tau == pytest.approx(1.0) and agreement.top1_match


def test_ranking_agreement():
    baseline = {"gpt4": 0.7332, "qwen72": 0.6965, "gpt35": 0.6741, "qwen14": 0.6293, "mixtral": 0.5785, "qwen7": 0.501}
    same = ranking_agreement(["gpt4", "qwen72", "gpt35", "qwen14", "mixtral", "qwen7"], baseline)
    assert same.kendall_tau == pytest.approx(1.0) and same.spearman_rho == pytest.approx(1.0) and same.top1_match
    swapped = ranking_agreement(["qwen72", "gpt4", "gpt35", "qwen14", "mixtral", "qwen7"], baseline)
    # one discordant pair out of 15: tau = (14 - 1) / 15
    assert swapped.kendall_tau == pytest.approx(13 / 15) and not swapped.top1_match
    reverse = ranking_agreement(list(reversed(list(baseline))), baseline)
    assert reverse.spearman_rho == pytest.approx(-1.0)
    json.dumps(swapped.to_dict(), allow_nan=False)


def test_bad_outcome_and_self_match_rejected():
    with pytest.raises(ValueError):
        win_rates([("a", "b", "maybe")])
    with pytest.raises(ValueError):
        elo([("a", "a", TIE)])
