"""Reports of an exam run: read the run directory, compute the figures, write JSON / Markdown / HTML.

    build_report(run_dir) -> {"json": Path, "md": Path, "html": Path, "figure:<name>": Path, ...}
    examiner.reporting.compare.compare(run_dirs) -> (markdown, html)

writer.py is the one report writer every method uses (exam here, judge and meta in their packages).

The names below load on first use: importing any module of this package (writer.strict for `examiner
gate`, run_reader for `examiner compare`) must not pull in the HTML, figures and model libraries
build_report needs (tests/architecture/test_startup_imports.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from examiner.reporting.build import build_report
    from examiner.reporting.run_reader import RunData, load_run

__all__ = ["build_report", "load_run", "RunData"]

_HOMES = {"build_report": "examiner.reporting.build", "load_run": "examiner.reporting.run_reader",
          "RunData": "examiner.reporting.run_reader"}


def __getattr__(name: str) -> Any:
    """build_report, load_run and RunData, imported when first asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'examiner.reporting' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
