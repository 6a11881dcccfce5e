"""Reports of an exam run: read the run directory, compute the figures, write JSON / Markdown / HTML.

    build_report(run_dir) -> {"json": Path, "md": Path, "html": Path, "figure:<name>": Path, ...}
    compare(run_dirs) -> (markdown, html)
"""

from examiner.report.build import build_report
from examiner.report.compare import compare
from examiner.report.store import RunData, load_run

__all__ = ["build_report", "compare", "load_run", "RunData"]
