"""Comparing runs as a library call: every target of one or more exam runs side by side, and each pair of
targets that share units compared on those units (paired difference, both tests, power, subgroups).

Each run's health is recomputed from its records (the exam report's checks) and shown beside its targets,
and people's overrides are applied to every figure, as in the run's own report (docs/COMMANDS.md)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from examiner.api.exam import read_exam
from examiner.api.rows import Rows
from examiner.api.settings import path_text, path_texts
from examiner.core.errors import UserError
from examiner.core.owned import check_replaceable, write_output
from examiner.reporting.model.compare import CompareReport, PairedSection


class CompareOptions(BaseModel):
    """`examiner compare`: the targets of one or more exam runs side by side."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_dirs: tuple[str, ...] = Field(min_length=1)
    """Exam run folders."""
    out: str | None = None
    """Write the Markdown here and the HTML and JSON beside it (FILE.html, FILE.json); None: write nothing."""
    metric: str | None = None
    """A knowledge figure (examiner.reporting.knowledge_compare.METRICS: hallucination_rate, f_score,
    penalised_0.75, ece, ...) whose paired difference B - A each pair gets, with its interval; None: none."""

    _paths = field_validator("run_dirs", mode="before")(path_texts)
    _file = field_validator("out", mode="before")(path_text)


@dataclass(frozen=True)
class ComparedTarget:
    """One target of one run, as the comparison shows it."""

    run_dir: str
    target: str
    status: str
    accuracy: float | None
    accuracy_low: float | None
    accuracy_high: float | None
    coverage: float | None
    coverage_low: float | None
    coverage_high: float | None
    correct: int
    incorrect: int
    unanswered: int
    uncovered: int
    run_cost_usd: float
    """What the whole run cost (all of its targets together)."""
    health: str | None = None
    """The run's health: pass, warn or fail (None: not checked)."""
    trustworthy: bool = True
    """False when the run's health failed: its figures are UNTRUSTWORTHY."""
    overrides: int = 0
    """People's overrides applied to this target's verdicts (the figures are with them)."""


@dataclass(frozen=True)
class CompareResult:
    """The comparison: one row per target, the paired comparison of each pair of targets that share units,
    the whole report (its model), its Markdown and HTML, and the files written (if any)."""

    targets: Rows[ComparedTarget]
    paired: tuple[PairedSection, ...]
    """Target B against target A (A listed first) on the units both were examined on: differences B - A in
    accuracy and coverage with their intervals, McNemar's exact and the cluster test, power, subgroups."""
    report: CompareReport
    markdown: str
    markdown_path: Path | None
    html_path: Path | None
    json_path: Path | None = None

    @cached_property
    def html(self) -> str:
        """The comparison as one HTML page, made when first asked for (its chart loads matplotlib: the
        command prints Markdown without it unless --out)."""
        from examiner.reporting.compare import compare_html

        return compare_html(self.report)

    def headlines(self) -> list[str]:
        """One line per pair: difference, interval, McNemar p, cluster p and detectable effect (what the CLI prints),
        marked UNTRUSTWORTHY where a side's run failed its health."""
        from examiner.reporting.compare import marked_headline

        return [marked_headline(self.report, section) for section in self.paired]

    def wording_lines(self) -> list[str]:
        """One line per pair whose runs measured the questions' wording (`--paraphrases`): the accuracy
        difference's interval with the wording-aware variance beside the blind one (the report files say
        for every pair which variance was used: PairedSection.wording)."""
        from examiner.reporting.compare_wording import wording_line
        from examiner.stats.paired import WORDING_AWARE

        return [wording_line(s) for s in self.paired if s.wording is not None and s.wording.variance == WORDING_AWARE]

    def metric_lines(self) -> list[str]:
        """One line per pair with `metric`: the figure for A and B and the difference B - A with its interval."""
        from examiner.reporting.knowledge_compare import metric_line

        return [metric_line(m) for m in self.report.metric_differences]

    def abstention_lines(self) -> list[str]:
        """One line per pair: the abstention rate for A and B and the difference B - A with its interval
        (always; none when `metric` is the abstention rate, whose lines metric_lines gives)."""
        from examiner.reporting.compare import abstention_shown
        from examiner.reporting.knowledge_compare import metric_line

        return [metric_line(m) for m in abstention_shown(self.report)]

    def control_lines(self) -> list[str]:
        """One line per target whose run asked control questions: refusal and false-premise acceptance."""
        from examiner.reporting.compare import control_line

        return [control_line(t) for t in self.report.targets if t.controls is not None]

    def warnings(self) -> list[str]:
        """Each run whose health failed (UNTRUSTWORTHY), and the overrides the figures include."""
        from examiner.reporting.compare import warnings

        return warnings(self.report)


def _cells(figure: Any) -> tuple[float | None, float | None, float | None]:
    return figure.value, figure.low, figure.high


def _health(run: Any) -> dict[str, Any]:
    """The run's health as its report computes it (examiner.exam.health)."""
    from examiner.exam.health import exam_health

    return exam_health(run).to_dict()


def compare_runs(options: CompareOptions) -> CompareResult:
    """Put every target of the runs side by side, as `examiner compare` does; with `out`, the Markdown
    and HTML are written there."""
    from examiner.reporting.compare import compare_html, compare_markdown, compare_report
    from examiner.reporting.writer import dumps, report_data

    report = compare_report(list(options.run_dirs), health_of=_health, metric=options.metric)
    markdown = compare_markdown(report)
    given = {Path(run_dir).resolve(): (run_dir, read_exam(run_dir).cost_usd) for run_dir in options.run_dirs}
    rows = []
    for t in report.targets:
        run_dir, cost = given.get(Path(t.path).resolve(), (t.path, 0.0))
        rows.append(ComparedTarget(run_dir, t.target, t.status, *_cells(t.accuracy), *_cells(t.coverage),
                                   t.counts.correct, t.counts.incorrect, t.counts.unanswered, t.counts.uncovered,
                                   cost, t.health, t.trustworthy, t.overrides))
    md_path = html_path = json_path = None
    if options.out:
        md_path = Path(options.out)
        if md_path.parent and not md_path.parent.exists():
            raise UserError(f"output folder does not exist: {md_path.parent}")
        html_path, json_path = md_path.with_suffix(".html"), md_path.with_suffix(".json")
        for path in (md_path, html_path, json_path):  # all three checked before any is written
            check_replaceable(path, "--out")
        write_output(md_path, markdown, "--out")
        write_output(html_path, compare_html(report), "--out")
        write_output(json_path, dumps(report_data(report)) + "\n", "--out")
    return CompareResult(Rows(ComparedTarget, rows), tuple(report.paired), report, markdown, md_path, html_path,
                         json_path)
