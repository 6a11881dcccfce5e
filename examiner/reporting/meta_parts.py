"""What the meta-evaluation report's renderers share (report.md and report.html in
examiner/meta/sections.py, the terminal in examiner/reporting/terminal.py): the ranking rows and tables,
the agreement tables and the orders, all read from the report model."""

from __future__ import annotations

from typing import TypedDict

from examiner.reporting.model.meta import BradleyTerryRating, EloRating, MetaReport
from examiner.reporting.writer import cell


class RankingRow(TypedDict):
    """One evaluator's place: baseline, overall win rate, mean meta-score, Elo and Bradley-Terry."""

    evaluator: str
    baseline: float | None
    win_rate: float | None
    mean_score: float | None
    elo: float | None
    elo_std: float | None
    elo_min: float | None
    elo_max: float | None
    bt: float | None
    bt_low: float | None
    bt_high: float | None


def elo_order(report: MetaReport) -> list[str]:
    """The evaluators by Elo, best first (empty without matches)."""
    return [x.player for x in report.rankings.elo.ratings] if report.rankings.elo else []


def baseline_order(report: MetaReport) -> list[str]:
    """The evaluators that have a baseline figure, best first."""
    scores = report.baseline.scores
    return sorted(scores, key=lambda e: -scores[e])


def ranking_rows(report: MetaReport) -> list[RankingRow]:
    """One row per evaluator, in Elo order (then the evaluators Elo did not rank, in the given order)."""
    r = report.rankings
    evaluators = report.config.evaluators
    elo: dict[str, EloRating] = {x.player: x for x in r.elo.ratings} if r.elo else {}
    bt: dict[str, BradleyTerryRating] = {x.player: x for x in r.bradley_terry.ratings} if r.bradley_terry else {}
    overall = r.win_rates.overall_win_rate if r.win_rates else {}
    means = r.mean_scores or {}
    order = elo_order(report) or list(evaluators)
    order += [e for e in evaluators if e not in order]
    rows: list[RankingRow] = []
    for e in order:
        el, b = elo.get(e), bt.get(e)
        rows.append(RankingRow(
            evaluator=e, baseline=report.baseline.scores.get(e), win_rate=overall.get(e), mean_score=means.get(e),
            elo=el.mean if el else None, elo_std=el.std if el else None, elo_min=el.min if el else None,
            elo_max=el.max if el else None, bt=b.rating if b else None, bt_low=b.rating_low if b else None,
            bt_high=b.rating_high if b else None))
    return rows


def ranking_table(report: MetaReport) -> tuple[list[str], list[list[str]]]:
    """The ranking table as report.md and report.html show it: header and formatted cells."""
    has_mean = bool(report.rankings.mean_scores)
    header = ["evaluator", "baseline", "win rate"] + (["mean score"] if has_mean else []) + [
        "Elo (mean ± std)", "Elo min-max", "BT rating [95% CI]"]
    rows = []
    for row in ranking_rows(report):
        rows.append([row["evaluator"], cell(row["baseline"]), cell(row["win_rate"])]
                    + ([cell(row["mean_score"], 2)] if has_mean else [])
                    + [f"{cell(row['elo'], 1)} ± {cell(row['elo_std'], 1)}",
                       f"{cell(row['elo_min'], 1)}-{cell(row['elo_max'], 1)}",
                       f"{cell(row['bt'], 1)} [{cell(row['bt_low'], 1)}, {cell(row['bt_high'], 1)}]"])
    return header, rows


def agreement_table(report: MetaReport) -> tuple[list[str], list[list[str]]]:
    """Each ranking's agreement with the baseline ranking (Elo, win rate, Bradley-Terry, mean score)."""
    found = report.rankings.agreement
    named = [(name, getattr(found, name)) for name in type(found).model_fields] if found else []
    rows = [[name, cell(a.kendall_tau), cell(a.spearman_rho), str(a.top1_match)] for name, a in named if a is not None]
    return ["ranking", "Kendall tau", "Spearman rho", "top-1 match"], rows


def gold_agreement_rows(report: MetaReport) -> list[list[str]]:
    """Verdict items with gold labels: each evaluator's items with gold, agreement and Cohen's kappa
    (empty for other items)."""
    return [[e, str(d.with_gold), cell((d.correct or 0) / d.with_gold if d.with_gold else None), cell(d.cohen_kappa)]
            for e, d in report.baseline.detail.items() if "cohen_kappa" in d.model_fields_set]


__all__ = ["RankingRow", "agreement_table", "baseline_order", "elo_order", "gold_agreement_rows", "ranking_rows",
           "ranking_table"]
