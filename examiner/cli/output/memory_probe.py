"""What `examiner probe-memory` prints: the figures per side with their intervals (Min-K%++ among them
where computed), the AUROC lines (or why Min-K%++ was not computed), the caveat, and where the files are."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from examiner.cli.flags import fitted_table, print_table

if TYPE_CHECKING:
    from examiner.reporting.model.memory_probe import MemoryProbeReport


def print_probe(report: MemoryProbeReport, paths: Mapping[str, Path]) -> None:
    from examiner.reporting.memory_probe import CAVEAT, headline, min_k_note, side_columns, side_rows

    # one column per side and a row per figure: three intervals side by side do not fit 80 columns
    rows = side_rows(report)
    columns = ("", *(row[0] for row in rows))
    table = fitted_table(f"Memorisation probe of {report.target} (95 % intervals over documents)",
                         columns, numeric=columns[1:])
    for i, measure in enumerate(side_columns(report)[1:], start=1):
        table.add_row(measure, *(row[i] for row in rows))
    print_table(table)
    print(headline(report))
    print(min_k_note(report))
    print(CAVEAT)
    print(f"{report.calls} calls ({report.cache_hits} more from the response cache), "
          f"${report.cost_usd:.4f}; per document: {paths['report_md']}; "
          f"completions: {paths['completions']}")
