"""What the judging report's renderers share (report.md in examiner/judging/sections.py, the terminal in
examiner/reporting/terminal.py): the convention sentence, the levels note and the rows of the agreement and
correlation tables, so both show the same figures in the same words."""

from __future__ import annotations

from examiner.reporting.model.common import Classification, Correlation
from examiner.reporting.model.judge import PairwiseSection, SingleSection
from examiner.reporting.writer import cell

LEVELS_NOTE = ("Levels: sample = one correlation over all rows; summary = a correlation per input (group), "
               "averaged over the inputs where both sides vary (n = inputs used); system = each system's mean "
               "scores, correlated across systems (n = systems). Kendall is tau-b. Brackets: 95% Fisher-z "
               "intervals over the n pairs (none at summary level).")
AGREEMENT_NOTE = ("Accuracy brackets: 95% Wilson interval over the n rows, taken as independent.")
"""How the agreement table's interval is computed (examiner.stats.agreement_intervals)."""
"""How the correlation levels are defined (examiner.stats.correlation; the SummEval / G-Eval conventions)."""

LEVELS = ("sample", "summary", "system")


def convention_text(section: PairwiseSection | SingleSection) -> str:
    """Which convention for unparseable judgments the section's figures used (--unparseable)."""
    if section.unparseable_convention == "wrong":
        lowest = section.lowest_score if isinstance(section, SingleSection) else None
        what = f"the lowest score ({cell(lowest)})" if lowest is not None else "a wrong label"
        return f"unparseable judgments: counted as {what} (--unparseable wrong)"
    if section.unparseable_convention == "own-class":
        return ("unparseable judgments: a class of their own, never correct; macro averages over the gold classes "
                "(--unparseable own-class)")
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


def with_interval(value: float | None, low: float | None, high: float | None, between: str = " ") -> str:
    """`0.812 [0.741, 0.870]`: a figure and its 95 % interval (the figure alone where it has none);
    `between` is what separates them (a newline in the terminal's narrow columns)."""
    if low is None or high is None or cell(low) == cell(None) or cell(high) == cell(None):
        return cell(value)
    return f"{cell(value)}{between}[{cell(low)}, {cell(high)}]"


def accuracy_cell(m: Classification, between: str = " ") -> str:
    """The agreement's accuracy with its Wilson interval."""
    return with_interval(m.accuracy, m.accuracy_low, m.accuracy_high, between)


def coefficient_cells(c: Correlation, between: str = " ") -> list[str]:
    """Pearson, Spearman and Kendall, each with its Fisher-z interval (none at summary level)."""
    return [with_interval(getattr(c, kind), getattr(c, f"{kind}_low"), getattr(c, f"{kind}_high"), between)
            for kind in ("pearson", "spearman", "kendall")]


def correlation_n(c: Correlation) -> int | None:
    """The n of a level: pairs (sample), systems (system) or the groups used (summary)."""
    return c.n if c.n is not None else c.n_groups_used


__all__ = ["AGREEMENT_NOTE", "LEVELS", "LEVELS_NOTE", "accuracy_cell", "agreement_rows", "coefficient_cells", "convention_text",
           "correlation_n", "correlation_rows", "with_interval"]
