"""What `examiner judge` and `examiner judge-stats` print: the judging report's figures, rendered from its
model by examiner.reporting.terminal, then where the report files are."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from examiner.reporting.model import JudgeReport


def print_summary(report: JudgeReport, paths: Mapping[str, Path]) -> None:
    """The report's figures as 80-column tables (undefined figures as n/a; report.md has them all), then
    the paths of the files written."""
    from examiner.reporting.terminal import judge_summary, print_summary as print_parts

    print_parts(judge_summary(report))
    from examiner.reporting.calibration_section import judge_calibration_lines

    for line in judge_calibration_lines(report.model_dump()):  # gold labels on only some rows: PPI++
        print(line)
    for name, path in paths.items():
        print(f"{name}: {path}")
