"""What the meta-evaluation report's renderers share (report.md and report.html in
examiner/meta/sections.py, the terminal in examiner/reporting/terminal.py): the ranking rows and tables,
the agreement tables and the orders, all read from the report model."""

from __future__ import annotations

from typing import TypedDict

from examiner.reporting.model.meta import EloRating, MetaReport, RatedPlayer, RatingIntervals
from examiner.reporting.writer import cell


class RankingRow(TypedDict):
    """One evaluator's place: baseline, overall win rate with its interval, mean meta-score, Elo and
    Bradley-Terry with their bootstrap intervals over matches and ranks, and Elo's match-order spread.

    elo / bt and their low / high come from the bootstrap over matches (FastChat's procedure); a report
    made before it existed falls back to the shuffle mean (elo, no interval) and the MM Bradley-Terry fit.
    elo_std, elo_min and elo_max are the spread over match orders only, never an interval."""

    evaluator: str
    baseline: float | None
    baseline_low: float | None
    baseline_high: float | None
    win_rate: float | None
    win_rate_low: float | None
    win_rate_high: float | None
    mean_score: float | None
    elo: float | None
    elo_low: float | None
    elo_high: float | None
    elo_rank: int | None
    elo_std: float | None
    elo_min: float | None
    elo_max: float | None
    bt: float | None
    bt_low: float | None
    bt_high: float | None
    bt_rank: int | None


def _rated(found: RatingIntervals | None) -> dict[str, RatedPlayer]:
    return {x.player: x for x in found.players} if found else {}


def elo_order(report: MetaReport) -> list[str]:
    """The evaluators by Elo, best first (the bootstrap median where the report has it; empty without
    matches)."""
    r = report.rankings
    if r.intervals:
        return [x.player for x in r.intervals.elo.players]
    return [x.player for x in r.elo.ratings] if r.elo else []


def baseline_order(report: MetaReport) -> list[str]:
    """The evaluators that have a baseline figure, best first."""
    scores = report.baseline.scores
    return sorted(scores, key=lambda e: -scores[e])


def rank_groups(report: MetaReport) -> list[str]:
    """One line per rating system with bootstrap intervals: its rank groups, best first (evaluators in
    one group share a rank: their intervals cannot order them)."""
    found = report.rankings.intervals
    if not found:
        return []
    lines = []
    for name, system in (("Elo", found.elo), ("Bradley-Terry", found.bradley_terry)):
        if system:
            groups = " > ".join("{" + ", ".join(g) + "}" if len(g) > 1 else g[0] for g in system.groups)
            lines.append(f"{name} rank groups ({100 * system.level:g}% bootstrap over {system.n_matches} matches, "
                         f"{system.n_rounds} rounds, seed {system.seed}): {groups}")
    return lines


def ranking_rows(report: MetaReport) -> list[RankingRow]:
    """One row per evaluator, in Elo order (then the evaluators Elo did not rank, in the given order)."""
    r = report.rankings
    evaluators = report.config.evaluators
    shuffled: dict[str, EloRating] = {x.player: x for x in r.elo.ratings} if r.elo else {}
    boot_elo = _rated(r.intervals.elo if r.intervals else None)
    boot_bt = _rated(r.intervals.bradley_terry if r.intervals else None)
    mm_bt = {x.player: x for x in r.bradley_terry.ratings} if r.bradley_terry and not r.intervals else {}
    overall = r.win_rates.overall_win_rate if r.win_rates else {}
    win_ci = (r.win_rates.overall_win_rate_interval or {}) if r.win_rates else {}
    means = r.mean_scores or {}
    order = elo_order(report) or list(evaluators)
    order += [e for e in evaluators if e not in order]
    rows: list[RankingRow] = []
    for e in order:
        sh, be, bb, mm, wc = shuffled.get(e), boot_elo.get(e), boot_bt.get(e), mm_bt.get(e), win_ci.get(e)
        gold = report.baseline.detail.get(e)
        rows.append(RankingRow(
            evaluator=e, baseline=report.baseline.scores.get(e), win_rate=overall.get(e),
            baseline_low=gold.value_low if gold else None, baseline_high=gold.value_high if gold else None,
            win_rate_low=wc.low if wc else None, win_rate_high=wc.high if wc else None, mean_score=means.get(e),
            elo=be.rating if be else (sh.mean if sh else None), elo_low=be.low if be else None,
            elo_high=be.high if be else None, elo_rank=be.rank if be else None,
            elo_std=sh.std if sh else None, elo_min=sh.min if sh else None, elo_max=sh.max if sh else None,
            bt=bb.rating if bb else (mm.rating if mm else None), bt_low=bb.low if bb else (mm.rating_low if mm else None),
            bt_high=bb.high if bb else (mm.rating_high if mm else None), bt_rank=bb.rank if bb else None))
    return rows


def interval_cell(value: float | None, low: float | None, high: float | None, digits: int = 1) -> str:
    """value [low, high], or the value alone where there is no interval."""
    if low is None or high is None:
        return cell(value, digits)
    return f"{cell(value, digits)} [{cell(low, digits)}, {cell(high, digits)}]"


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


RANKING_NOTE = ("Elo and BT: 95% percentile bootstrap over matches (FastChat's procedure; Elo K=4, median over "
                "rounds; BT fitted on the observed matches). Rank: 1 + evaluators whose interval lies wholly above "
                "(equal ranks: the data cannot order them). Match-order spread: std of Elo over shuffles of the same "
                "matches, not an interval. Win rate: interval over matches grouped by item.")


def ranking_table(report: MetaReport) -> tuple[list[str], list[list[str]]]:
    """The ranking table as report.md and report.html show it: header and formatted cells."""
    has_mean = bool(report.rankings.mean_scores)
    header = ["evaluator", "baseline [95% CI]", "win rate [95% CI]"] + (["mean score"] if has_mean else []) + [
        "Elo [95% CI]", "Elo rank", "BT [95% CI]", "BT rank", "Elo match-order spread (std)"]
    rows = []
    for row in ranking_rows(report):
        rows.append([row["evaluator"], interval_cell(row["baseline"], row["baseline_low"], row["baseline_high"], 3),
                     interval_cell(row["win_rate"], row["win_rate_low"], row["win_rate_high"], 3)]
                    + ([cell(row["mean_score"], 2)] if has_mean else [])
                    + [interval_cell(row["elo"], row["elo_low"], row["elo_high"]), _rank(row["elo_rank"]),
                       interval_cell(row["bt"], row["bt_low"], row["bt_high"]), _rank(row["bt_rank"]),
                       f"± {cell(row['elo_std'], 1)}"])
    return header, rows


def agreement_table(report: MetaReport) -> tuple[list[str], list[list[str]]]:
    """Each ranking's agreement with the baseline ranking (Elo, win rate, Bradley-Terry, mean score)."""
    found = report.rankings.agreement
    named = [(name, getattr(found, name)) for name in type(found).model_fields] if found else []
    rows = [[name, cell(a.kendall_tau), cell(a.spearman_rho), str(a.top1_match)] for name, a in named if a is not None]
    return ["ranking", "Kendall tau", "Spearman rho", "top-1 match"], rows


def gold_agreement_rows(report: MetaReport) -> list[list[str]]:
    """Verdict items with gold labels: each evaluator's items with gold, agreement with its 95 % Wilson
    interval and Cohen's kappa (empty for other items)."""
    return [[e, str(d.with_gold), interval_cell((d.correct or 0) / d.with_gold if d.with_gold else None,
                                                d.value_low, d.value_high, 3), cell(d.cohen_kappa)]
            for e, d in report.baseline.detail.items() if "cohen_kappa" in d.model_fields_set]


__all__ = ["RANKING_NOTE", "RankingRow", "agreement_table", "baseline_order", "elo_order", "gold_agreement_rows",
           "interval_cell", "rank_groups", "ranking_rows", "ranking_table"]
