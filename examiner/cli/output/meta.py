"""What `examiner meta` prints: the ranking (baseline, win rate, Elo, Bradley-Terry), the agreement with
gold labels where there are some, and how the Elo ranking agrees with the baseline's, rendered from the
meta report's model by examiner.reporting.terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from examiner.meta.pipeline import MetaRun


def print_summary(run: MetaRun) -> None:
    """The meta-evaluation's summary tables and lines, read from its report model."""
    from examiner.meta.sections import meta_report
    from examiner.reporting.terminal import meta_summary, print_summary as print_parts

    print_parts(meta_summary(meta_report(run)))
