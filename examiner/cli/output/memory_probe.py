"""What `examiner probe-memory` prints: the figures per side with their intervals, the AUROC line, the
caveat, and where the files are."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from examiner.cli.flags import fitted_table, print_table


def print_probe(report: Mapping[str, Any], paths: Mapping[str, Path]) -> None:
    from examiner.reporting.memory_probe import CAVEAT, SIDE_COLUMNS, headline, side_rows

    table = fitted_table(f"Memorisation probe of {report['target']} (95 % intervals over documents)",
                         SIDE_COLUMNS, numeric=SIDE_COLUMNS[1:])
    for row in side_rows(report):
        table.add_row(*row)
    print_table(table)
    print(headline(report))
    print(CAVEAT)
    print(f"{report['calls']} calls ({report.get('cache_hits', 0)} more from the response cache), "
          f"${report['cost_usd']:.4f}; per document: {paths['report_md']}; "
          f"completions: {paths['completions']}")
