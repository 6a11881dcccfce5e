"""Comparing runs as a library call: every target of one or more exam runs side by side."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from examiner.api.exam import Figure, read_exam
from examiner.api.rows import Rows
from examiner.api.settings import path_text, path_texts
from examiner.core.errors import UserError


class CompareOptions(BaseModel):
    """`examiner compare`: the targets of one or more exam runs side by side."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_dirs: tuple[str, ...] = Field(min_length=1)
    """Exam run folders."""
    out: str | None = None
    """Write the Markdown here and the HTML beside it (FILE.html); None: write nothing."""

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


@dataclass(frozen=True)
class CompareResult:
    """The comparison: one row per target, its Markdown and HTML, and the files written (if any)."""

    targets: Rows[ComparedTarget]
    markdown: str
    html: str
    markdown_path: Path | None
    html_path: Path | None


def _cells(figure: Figure) -> tuple[float | None, float | None, float | None]:
    return figure.value, figure.low, figure.high


def compare_runs(options: CompareOptions) -> CompareResult:
    """Put every target of the runs side by side, as `examiner compare` does; with `out`, the Markdown
    and HTML are written there."""
    from examiner.reporting import compare

    markdown, html = compare(list(options.run_dirs))
    rows = []
    for run_dir in options.run_dirs:
        exam = read_exam(run_dir)
        rows += [ComparedTarget(run_dir, t.target, exam.status, *_cells(t.accuracy), *_cells(t.coverage), t.correct,
                                t.incorrect, t.unanswered, t.uncovered, exam.cost_usd) for t in exam.targets.values()]
    md_path = html_path = None
    if options.out:
        md_path = Path(options.out)
        if md_path.parent and not md_path.parent.exists():
            raise UserError(f"output folder does not exist: {md_path.parent}")
        md_path.write_text(markdown, encoding="utf-8")
        html_path = md_path.with_suffix(".html")
        html_path.write_text(html, encoding="utf-8")
    return CompareResult(Rows(ComparedTarget, rows), markdown, html, md_path, html_path)
