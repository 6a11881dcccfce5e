"""The exam report (an ExamReport) on a terminal: the summary `examiner run`, `resume` and `report` print.

Why rich tables fitted to 80 columns: numbers keep their width, text wraps, nothing is cut short. The
lines and tables are the ones examiner/cli/commands/exam.py prints today from report.json's data; this
renderer reads the model instead (the CLI can switch to `exam_summary`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from examiner.reporting.health_section import UNTRUSTWORTHY, failed, headline, health_rows, self_agreement_text
from examiner.reporting.languages import LANGUAGE_HEADER, language_line, language_rows, shows_languages
from examiner.reporting.markdown import judge_line
from examiner.reporting.model import ExamReport
from examiner.reporting.model.exam import Estimate, HealthSection, JudgePanel

UNIT_KINDS = ("correct", "incorrect", "unanswered", "uncovered")


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


def score_tables(report: ExamReport) -> list[Table]:
    """The per-target figures as two narrow tables: the scores, then the unit counts."""
    scores = fitted_table("accuracy and coverage [95% interval]", ("target", "accuracy", "coverage"),
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


def exam_summary(report: ExamReport, run_dir: Path) -> list[Any]:
    """What the terminal shows of an exam report, in order: lines (str) and rich tables. The caller prints
    its own first line (`exam RUN_ID: status (stop reason)`) and the paths of the report files."""
    out: list[Any] = [*health_lines(report.health), f"mode {report.run.mode}, judge {judge_line(report.run)}"]
    if failed(report.health):
        out.append(UNTRUSTWORTHY)
    out += score_tables(report)
    total = report.cost.total
    share = total.cached_input_share or 0.0
    out.append(f"cost ${total.cost_usd:.4f}: {total.calls} calls ({total.batch_calls} batch), "
               f"{100 * share:.1f}% of prompt tokens from the provider's prompt cache "
               f"(examiner cost {run_dir} splits it)")
    if shows_languages(report.run):
        out.append(language_table(report))
    if report.judge_panel:
        out.append(panel_table(report.judge_panel))
    return out


def print_summary(parts: Sequence[Any], console: Console | None = None) -> None:
    """Print what `exam_summary` gave: lines as they are, tables through rich."""
    console = console or Console()
    for part in parts:
        if isinstance(part, str):
            print(part)
        else:
            console.print(part)


__all__ = ["exam_summary", "fitted_table", "health_lines", "print_summary", "score_tables"]
