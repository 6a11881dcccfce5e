"""What the judging report's renderers share (report.md in examiner/judging/sections.py, the terminal in
examiner/reporting/terminal.py): the convention sentence, the levels note and the rows of the agreement and
correlation tables, so both show the same figures in the same words."""

from __future__ import annotations

from examiner.reporting.model.common import Classification, Correlation
from examiner.reporting.model.judge import PairwiseSection, SingleSection
from examiner.reporting.writer import cell

LEVELS_NOTE = ("Levels: sample = one correlation over all rows; summary = a correlation per input (group), "
               "averaged over the inputs where both sides vary (n = inputs used); system = each system's mean "
               "scores, correlated across systems (n = systems). Kendall is tau-b.")
"""How the correlation levels are defined (examiner.stats.correlation; the SummEval / G-Eval conventions)."""

LEVELS = ("sample", "summary", "system")


def convention_text(section: PairwiseSection | SingleSection) -> str:
    """Which convention for unparseable judgments the section's figures used (--unparseable)."""
    if section.unparseable_convention == "wrong":
        lowest = section.lowest_score if isinstance(section, SingleSection) else None
        what = f"the lowest score ({cell(lowest)})" if lowest is not None else "a wrong label"
        return f"unparseable judgments: counted as {what} (--unparseable wrong)"
    return "unparseable judgments: left out of the figures (--unparseable drop)"


def agreement_rows(section: PairwiseSection) -> list[tuple[str, Classification]]:
    """(comparison, figures) for the judge against the labels and the teacher, then each classic metric
    (RevisEval) against the labels; comparisons the section lacks are left out."""
    rows: list[tuple[str, Classification | None]] = [("judge vs labels", section.agreement),
                                                      ("judge vs teacher", section.teacher_agreement)]
    rows += [(f"metric {name} vs labels", m) for name, m in (section.classic_metric_agreement or {}).items()]
    return [(name, m) for name, m in rows if m is not None]


def correlation_rows(section: SingleSection) -> list[tuple[str, str, Correlation]]:
    """(scorer, level, correlations) for every scorer and level the section has, judge first."""
    return [(scorer, level, c) for scorer, levels in (section.correlation_with_human or {}).items()
            for level in LEVELS if (c := getattr(levels, level)) is not None]


def correlation_n(c: Correlation) -> int | None:
    """The n of a level: pairs (sample), systems (system) or the groups used (summary)."""
    return c.n if c.n is not None else c.n_groups_used


__all__ = ["LEVELS", "LEVELS_NOTE", "agreement_rows", "convention_text", "correlation_n", "correlation_rows"]
