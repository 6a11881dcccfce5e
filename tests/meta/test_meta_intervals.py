"""Meta-evaluation reports carry bootstrap intervals over matches and rank groups (issue 28, item 6): on a
simulated JDEval and MDEval run the report's Elo and Bradley-Terry intervals, ranks and rank groups are
examiner.stats.rankings' on the same matches, the win rates have intervals, and Elo's shuffle spread is
labelled as a match-order spread, never as an interval."""

from __future__ import annotations

import asyncio
import copy
import io
from pathlib import Path

import pytest
from rich.console import Console

import examiner.simulator.meta_roles  # noqa: F401
from examiner.core.assessments import MetaItem
from examiner.core.config import EndpointSpec, Settings
from examiner.meta.pipeline import MetaConfig, MetaRun, run_meta
from examiner.meta.sections import meta_report, to_html, to_markdown
from examiner.reporting.meta_parts import ranking_rows
from examiner.reporting.terminal import meta_summary, print_summary
from examiner.stats import rankings
from examiner.stats.intervals import accuracy_interval

SETTINGS = Settings(endpoints={name: EndpointSpec(provider="simulated", model=model, max_concurrency=16)
                               for name, model in (("e80", "sim-acc0.8"), ("e65", "sim-acc0.65"),
                                                   ("e50", "sim-acc0.5"), ("meta", "sim-rel0.9"))},
                    roles={"meta_judge": "meta"})
ROUNDS = 200


@pytest.fixture(scope="module", params=["jdeval", "mdeval"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> MetaRun:
    items = [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Summarise fact {i}.", output_1=f"Fact {i} holds.",
                      output_2=f"Something else about {i}.", gold_label="Answer2" if i % 2 else "Answer1")
             for i in range(30)]
    config = MetaConfig(evaluators=["e80", "e65", "e50"], method=request.param, bootstrap=ROUNDS, shuffles=20,
                        seed=7, draws=1, max_rounds=2)
    return asyncio.run(run_meta(items, config, SETTINGS, tmp_path_factory.mktemp(request.param)))


def _matches(run: MetaRun) -> list[tuple[str, str, object]]:
    return [(j.assistant_1, j.assistant_2, j.outcome) for j in run.judgments if j.outcome is not None]


def test_intervals_and_rank_groups_are_the_library_s_on_the_same_matches(run: MetaRun) -> None:
    matches = _matches(run)
    assert len(matches) >= 20
    report = meta_report(run)
    found = report.rankings.intervals
    assert found is not None and found.bradley_terry is not None
    for ours, theirs in ((found.elo, rankings.elo_bootstrap(matches, n_rounds=ROUNDS, seed=7)),
                         (found.bradley_terry, rankings.bradley_terry_bootstrap(matches, n_rounds=ROUNDS, seed=7))):
        assert ours.n_matches == len(matches) and ours.n_rounds == ROUNDS and ours.seed == 7
        assert [(p.player, p.rating, p.low, p.high, p.rank) for p in ours.players] == [
            (p.player, p.rating, p.low, p.high, p.rank) for p in theirs.players]
        assert [tuple(g) for g in ours.groups] == list(theirs.groups)
        assert all(p.low < p.rating < p.high for p in ours.players)  # sampling, not a point
    rows = {row["evaluator"]: row for row in ranking_rows(report)}
    for p in found.bradley_terry.players:
        assert (rows[p.player]["bt"], rows[p.player]["bt_low"], rows[p.player]["bt_high"], rows[p.player]["bt_rank"]) \
            == (p.rating, p.low, p.high, p.rank)


def test_win_rates_have_intervals_over_matches_grouped_by_item(run: MetaRun) -> None:
    report = meta_report(run)
    assert report.rankings.win_rates is not None
    found = report.rankings.win_rates.overall_win_rate_interval
    assert found is not None and set(found) == {"e80", "e65", "e50"}
    for player, figure in found.items():
        mine = [j for j in run.judgments if j.outcome is not None and player in (j.assistant_1, j.assistant_2)]
        won = [int(j.outcome.value == ("first" if j.assistant_1 == player else "second")) for j in mine]
        expected = accuracy_interval(won, [j.item_id for j in mine])
        assert (figure.value, figure.low, figure.high) == (expected.estimate, expected.low, expected.high)
        assert figure.groups == len({j.item_id for j in mine}) and figure.small_sample == (figure.groups < 30)
        assert figure.value == pytest.approx(report.rankings.win_rates.overall_win_rate[player])
        assert figure.low is not None and figure.high is not None and figure.low < figure.high


def test_renderers_show_intervals_and_label_the_match_order_spread(run: MetaRun) -> None:
    report = meta_report(run)
    md, page = to_markdown(report), to_html(report)
    for text in (md, page):
        assert "Elo [95% CI]" in text and "BT [95% CI]" in text and "Elo rank" in text
        assert "Elo match-order spread (std)" in text and "not an interval" in text
        assert "Elo rank groups" in text and "Bradley-Terry rank groups" in text
    assert "Elo (mean ± std)" not in md and "Elo min-max" not in md
    console = Console(file=io.StringIO(), width=80)
    print_summary(meta_summary(report)[:1], console)
    table = console.file.getvalue()  # type: ignore[attr-defined]
    assert "rank by BT" in table
    assert max(len(line) for line in table.splitlines()) <= 80
    low = report.rankings.intervals.elo.players[0].low  # type: ignore[union-attr]
    assert f"{low:.0f}" in table


def test_a_report_without_intervals_still_renders(run: MetaRun, tmp_path: Path) -> None:
    """report.json written before the intervals existed: the ranking falls back to the shuffle mean and the
    MM Bradley-Terry fit, with no rank."""
    data = copy.deepcopy(run.to_dict())
    del data["rankings"]["intervals"]
    del data["rankings"]["win_rates"]["overall_win_rate_interval"]
    old = type(meta_report(run)).model_validate(data)
    rows = ranking_rows(old)
    assert all(row["elo_rank"] is None and row["elo_low"] is None and row["bt"] is not None for row in rows)
    assert "Elo rank groups" not in to_markdown(old)
