"""Reports on a terminal, read from their models: the exam's summary (`examiner run`, `resume`, `report`),
a judging report's (`examiner judge`, `judge-stats`) and a meta-evaluation's (`examiner meta`).

Why rich tables fitted to 80 columns: numbers keep their width, text wraps, nothing is cut short. Each
`*_summary` returns the lines (str) and tables in order, and `print_summary` prints them; the lines and
tables are the ones examiner/cli/output prints today from report.json's data or the MetaRun.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from examiner.core.sim_prices import illustrative_note
from examiner.core.console import make_console, prose_width
from examiner.core.plain_text import visible_controls

from examiner.reporting.bias_render import bias_line
from examiner.reporting.cascade_section import cascade_line
from examiner.reporting.gate_section import gate_line
from examiner.reporting.knowledge_section import control_lines
from examiner.reporting.stopping_section import stopping_line
from examiner.reporting.health_section import UNTRUSTWORTHY, failed, headline, health_rows, self_agreement_text
from examiner.reporting.judge_parts import (
    AGREEMENT_NOTE,
    LEVELS_NOTE,
    accuracy_cell,
    agreement_rows,
    coefficient_cells,
    convention_text,
    correlation_n,
    correlation_rows,
    with_interval,
)
from examiner.reporting.layout import examined_lines, figure_mark, report_title, went_wrong
from examiner.reporting.languages import LANGUAGE_HEADER, language_line, language_rows, shows_languages
from examiner.reporting.meta_parts import gold_agreement_rows, ranking_rows
from examiner.reporting.score_intervals import small_sample_notes
from examiner.reporting.model import ExamReport, JudgeReport, MetaReport
from examiner.reporting.model.exam import Estimate, HealthSection, JudgePanel
from examiner.reporting.model.judge import PairwiseSection, SingleSection
from examiner.reporting.model.meta import RankingAgreement
from examiner.reporting.writer import cell

UNIT_KINDS = ("correct", "incorrect", "abstained", "unanswered", "uncovered")


def fitted_table(title: str, columns: Sequence[str], numeric: Collection[str] = ()) -> Table:
    """A rich table that fits an 80-column terminal without hiding anything (text columns fold, number
    columns keep their width, no ellipsis)."""
    table = Table(title=title, title_justify="left")
    for name in columns:
        if name in numeric:
            table.add_column(name, justify="right", no_wrap=True, overflow="fold")
        else:
            table.add_column(name, overflow="fold")
    return table


def interval(figure: Estimate) -> str:
    """A value with its 95% interval below it (two short lines fit an 80-column table); '-' for none."""
    if figure.value is None:
        return "-"
    if figure.low is None or figure.high is None:
        return f"{figure.value:.3f}"
    return f"{figure.value:.3f}\n[{figure.low:.3f}, {figure.high:.3f}]"


def score_tables(report: ExamReport, mark: str = "") -> list[Table]:
    """The per-target figures as two narrow tables: the scores, then the unit counts; `mark` ends the
    scores' title (UNTRUSTWORTHY when health failed)."""
    scores = fitted_table(f"accuracy and coverage [95% interval]{mark}", ("target", "accuracy", "coverage"),
                          numeric=("accuracy", "coverage"))
    counts = fitted_table("knowledge units", ("target", *UNIT_KINDS), numeric=UNIT_KINDS)
    for name, target in report.targets.items():
        scores.add_row(name, interval(target.accuracy), interval(target.coverage))
        counts.add_row(name, *(str(getattr(target.counts, kind)) for kind in UNIT_KINDS))
    return [scores, counts]


def health_lines(health: HealthSection | None) -> list[str]:
    """The run's health first: its status, the checks that did not pass with their examples, and the
    judge self-agreement (nothing when it was not computed)."""
    if not health:
        return []
    lines = [headline(health)]
    for row in health_rows(health):
        if row[1] in ("warn", "fail"):
            lines.append(f"  {row[0]}: {row[1]}, {row[4]} (threshold {row[3]})" + (f"; e.g. {row[5]}" if row[5] else ""))
    return [*lines, f"  {self_agreement_text(health)}"]


def language_table(report: ExamReport) -> Table:
    """Accuracy per target and language, under the exam's language."""
    table = fitted_table(f"language: {language_line(report.run)}", LANGUAGE_HEADER, numeric=LANGUAGE_HEADER[2:])
    for row in language_rows(report):
        table.add_row(*(("-" if v is None else f"{v:.3f}") if i == len(row) - 1 else str(v) for i, v in enumerate(row)))
    return table


def panel_table(panel: JudgePanel) -> Table:
    """Per-member agreement with the judge panel."""
    numbers = ("agreement", "agreed / compared", "unscored")
    table = fitted_table(f"judge panel: {panel.verdicts} verdicts, {panel.tied_or_unscored} tied or unscored",
                         ("target", "member", *numbers), numeric=numbers)
    for row in panel.agreement:
        rate = "-" if row.agreement is None else f"{row.agreement:.3f}"
        table.add_row(row.target, row.member, rate, f"{row.agreed} / {row.compared}", str(row.unscored))
    return table


def _prose(text: str, first: str = "") -> str:
    """A sentence wrapped at the terminal's width (examiner.core.console.prose_width), its next lines
    indented under the first's text; one line when piped, so no word is split and tools read one line."""
    width = prose_width()
    if width is None:
        return first + " ".join(text.split())
    return textwrap.fill(text, width, initial_indent=first, subsequent_indent=" " * max(len(first), 4))


def _fill(text: str) -> str:
    """A paragraph wrapped as `_prose` wraps, without indenting its next lines."""
    width = prose_width()
    return " ".join(text.split()) if width is None else textwrap.fill(text, width)


def exam_summary(report: ExamReport, run_dir: Path) -> list[Any]:
    """What the terminal shows of an exam report, in order: lines (str) and rich tables. The caller prints
    its own first line (`exam RUN_ID: status (stop reason)`) and the paths of the report files."""
    out: list[Any] = [report_title(report), *map(_prose, examined_lines(report))]  # report.md's order (layout.py)
    if failed(report.health):
        out.append(UNTRUSTWORTHY)
    out += score_tables(report, mark=figure_mark(report))
    out += small_sample_notes(report.targets.items())
    total = report.cost.total
    share = total.cached_input_share or 0.0
    out.append(f"cost ${total.cost_usd:.4f}: {total.calls} calls ({total.batch_calls} batch), "
               f"{100 * share:.1f}% of prompt tokens from the provider's prompt cache "
               f"(examiner cost {run_dir} splits it)")
    if note := illustrative_note(run_dir):
        out.append(f"  {note}")
    # `health: FAIL (...)` as the CLI always printed it (scripts grep for it); report.md says `Health: FAIL`
    if report.health:
        out += [headline(report.health), f"  {self_agreement_text(report.health)}"]
    else:
        out.append("health: not checked for this report")
    out += ["What went wrong:", *(_prose(item, "  - ") for item in went_wrong(report))]
    if shows_languages(report.run):
        out.append(language_table(report))
    if report.judge_panel:
        out.append(panel_table(report.judge_panel))
    out += [line] if (line := cascade_line(report.cascade)) else []
    out += [line] if (line := stopping_line(report.stopping)) else []
    out += [line] if (line := gate_line(report.question_gate)) else []
    out += control_lines(report)
    out += [line] if (line := bias_line(report.bias_audit)) else []
    return out


JUDGE_FACTS = ("judge", "status", "rows_judged", "rows_skipped", "calls", "cache_hits", "cost_usd", "wall_s")
"""The run's figures the judging summary's second line gives (those the report has)."""


def _pairwise_parts(section: PairwiseSection) -> list[Any]:
    parts: list[Any] = [f"judgments {section.n_judgments}, unparseable {section.n_unparseable}, failed calls "
                        f"{section.n_failed_calls}; verdicts {section.verdicts}", convention_text(section)]
    numbers: tuple[str, ...] = ("n", "accuracy [95%]", "macro P", "macro R", "macro F1")
    table = fitted_table("agreement", ("comparison", *numbers), numeric=numbers)
    for name, m in agreement_rows(section):
        table.add_row(name, str(m.n), accuracy_cell(m, "\n"),
                      *(cell(v) for v in (m.macro_precision, m.macro_recall, m.macro_f1)))
    if table.rows:
        parts += [table, _fill(AGREEMENT_NOTE)]
    parts += _implementations(section.metric_implementations)
    if section.panel_agreement:
        numbers = ("agrees with panel [95%]", "compared", "unscored")
        table = fitted_table("judge panel", ("member", *numbers), numeric=numbers)
        for member in section.panel_agreement:
            table.add_row(member.member, with_interval(member.rate, member.rate_low, member.rate_high, "\n"),
                          str(member.compared), str(member.unscored))
        parts.append(table)
    swap = section.swap
    if swap:
        numbers = ("pairs in both orders", "all pairs")
        table = fitted_table(f"position swap: {swap.n_pairs_both_orders} pairs judged in both orders, "
                             f"consistency {with_interval(swap.consistency, swap.consistency_low, swap.consistency_high)}",
                             ("bias", *numbers), numeric=numbers)
        table.add_row("first position", cell(swap.bias_first), cell(swap.bias_first_all_pairs))
        table.add_row("second position", cell(swap.bias_second), cell(swap.bias_second_all_pairs))
        table.add_row("delta", cell(swap.delta_bias), cell(swap.delta_bias_all_pairs))
        parts.append(table)
    return parts


def _single_parts(section: SingleSection) -> list[Any]:
    parts: list[Any] = [f"judgments {section.n_judgments}, scored {section.n_scored}, unparseable "
                        f"{section.n_unparseable}, failed calls {section.n_failed_calls}; mean score "
                        f"{cell(section.mean_score)}"]
    if section.geval_paths:
        parts.append(f"G-Eval paths {section.geval_paths}, unparseable samples excluded "
                     f"{section.geval_unparseable_samples}")
    parts.append(convention_text(section))
    rows = correlation_rows(section)
    if rows:
        numbers = ("n", "Pearson", "Spearman", "Kendall")
        table = fitted_table("correlation with human scores", ("scorer", "level", *numbers), numeric=numbers)
        for name, level, c in rows:
            table.add_row(name, level, str(correlation_n(c)), *coefficient_cells(c, "\n"))
        parts += [table, _fill(LEVELS_NOTE)]
    return parts + _implementations(section.metric_implementations)


def _implementations(given: dict[str, str] | None) -> list[Any]:
    """What computed each classic metric shown (rouge-score's version, BERTScore's model), one line each."""
    return [_fill(f"{name}: {text}") for name, text in (given or {}).items()]


def judge_summary(report: JudgeReport) -> list[Any]:
    """What the terminal shows of a judging report (`examiner judge`, `judge-stats`), in order: lines and
    tables, undefined figures as n/a; report.md has them all. The caller prints the report files' paths."""
    given = report.model_fields_set
    facts = [f"{key.replace('_', ' ')} {cell(getattr(report, key))}" for key in JUDGE_FACTS if key in given]
    dataset = report.dataset if "dataset" in given else "-"
    parts: list[Any] = [f"judging report: {report.method} on {dataset}", _fill(", ".join(facts))]
    if report.pairwise:
        parts += _pairwise_parts(report.pairwise)
    if report.single:
        parts += _single_parts(report.single)
    parts += [line] if (line := bias_line(report.bias_audit)) else []
    return parts


def _figure(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def ranking_summary_table(report: MetaReport) -> Table:
    """The evaluators best first: baseline, win rate, Elo and Bradley-Terry with their 95% bootstrap
    intervals over matches, and the rank (1 + evaluators whose interval lies wholly above: Bradley-Terry's,
    else Elo's). Elo's match-order spread, not an interval, is left to report.md to fit 80 columns."""
    f = _figure

    def with_ci(value: float | None, low: float | None, high: float | None, digits: int) -> str:
        return f(value, digits) if low is None or high is None else (
            f"{f(value, digits)}\n[{f(low, digits)}, {f(high, digits)}]")

    rows = ranking_rows(report)
    by = "BT" if any(row["bt_rank"] is not None for row in rows) else "Elo"
    numbers = ("baseline", "win rate", "Elo", "BT", "rank")
    table = fitted_table(f"meta-evaluation ({report.config.method}), {report.rankings.matches} matches; "
                         f"95% intervals over matches; rank by {by} intervals", ("evaluator", *numbers),
                         numeric=numbers)
    for row in rows:
        rank = row["bt_rank"] if by == "BT" else row["elo_rank"]
        table.add_row(row["evaluator"], with_ci(row["baseline"], row["baseline_low"], row["baseline_high"], 3),
                      with_ci(row["win_rate"], row["win_rate_low"], row["win_rate_high"], 2),
                      with_ci(row["elo"], row["elo_low"], row["elo_high"], 0),
                      with_ci(row["bt"], row["bt_low"], row["bt_high"], 0), "-" if rank is None else str(rank))
    return table


def gold_agreement_summary_table(report: MetaReport) -> Table | None:
    """Verdict items with gold labels (--human-labels): each evaluator's agreement and Cohen's kappa."""
    rows = gold_agreement_rows(report)
    if not rows:
        return None
    header = ("evaluator", "items with gold", "agreement [95%]", "Cohen's kappa")
    table = fitted_table("agreement with the gold labels (people's overrides)", header, numeric=header[1:])
    for row in rows:
        table.add_row(*row)
    return table


def agreement_line(agree: RankingAgreement, baseline: Mapping[str, float]) -> str:
    """Elo ranking vs the baseline ranking, or why the comparison is undefined: a rank correlation (and
    a top-1 match) means nothing when every evaluator has the same baseline score (or the same Elo)."""
    tau, rho = agree.kendall_tau, agree.spearman_rho
    if tau is not None and rho is not None and math.isfinite(tau) and math.isfinite(rho):
        return (f"Elo vs baseline: Kendall tau {tau:.3f}, Spearman rho {rho:.3f}, "
                f"top-1 match {'yes' if agree.top1_match else 'no'}")
    compared = [baseline[p] for p in agree.players if p in baseline]
    why = "baselines tie" if len(set(compared)) <= 1 else "Elo ratings tie"
    return f"Elo vs baseline: rank correlation and top-1 match undefined: {why}"


def meta_summary(report: MetaReport) -> list[Any]:
    """What the terminal shows of a meta-evaluation (`examiner meta`), in order: the ranking table, the
    agreement with gold labels where the items have some, the meta-judge's bias audit in one line, and how
    the Elo ranking agrees with the baseline's. The caller prints the problems and the report files' paths."""
    parts: list[Any] = [ranking_summary_table(report)]
    gold = gold_agreement_summary_table(report)
    if gold is not None:
        parts.append(gold)
    parts += [line] if (line := bias_line(report.bias_audit)) else []
    agree = report.rankings.agreement.elo if report.rankings.agreement else None
    if agree:
        parts.append(agreement_line(agree, report.baseline.scores))
    return parts


def print_summary(parts: Sequence[Any], console: Console | None = None) -> None:
    """Print what a `*_summary` gave: lines with their control characters shown (they hold targets' and
    documents' names), tables through rich (whose console does the same)."""
    console = console or make_console()  # COLUMNS, the terminal's width, or wide when piped
    for part in parts:
        if isinstance(part, str):
            print(visible_controls(part))
        else:
            console.print(part)


__all__ = ["agreement_line", "exam_summary", "fitted_table", "health_lines", "judge_summary", "meta_summary",
           "print_summary", "score_tables"]
