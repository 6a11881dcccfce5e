"""Reports of an exam run: read the run directory, compute the figures, write JSON / Markdown / HTML.

    build_report(run_dir) -> {"json": Path, "md": Path, "html": Path, "figure:<name>": Path, ...}
    compare(run_dirs) -> (markdown, html)

writer.py is the one report writer every method uses (exam here, judge and meta in their packages).
"""

from examiner.reporting.build import build_report
from examiner.reporting.compare import compare
from examiner.reporting.run_reader import RunData, load_run

__all__ = ["build_report", "compare", "load_run", "RunData"]
