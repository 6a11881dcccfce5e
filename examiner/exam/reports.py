"""Rebuilding an exam run's reports from its folder: what `examiner report RUN` does and what an exam does
when it ends.

A module of its own so that `examiner report` imports the report writers only, not the exam runner with
its graph engine (langgraph) and model gateway (the provider clients): the command calls no model.
"""

from __future__ import annotations

from pathlib import Path

from examiner.core.owned import refuse_links
from examiner.core.rundir import RunDir
from examiner.core.stopping import stop_signals_raise
from examiner.exam.health import exam_health

__all__ = ["build_reports"]


@stop_signals_raise()
def build_reports(run_dir: str | Path, *, map_rounds: list[int] | None = None) -> dict[str, Path]:
    """report.json/.md/.html (with the run's health, recomputed from its records) and provenance.graphml
    (left out of the result when the run is over its size limit). A run folder holding a symbolic link
    is refused first: no report, figure or graph is written through one. A stop signal while they are
    written ends the command at once (the event loop would only see it once they were done); each file
    is replaced whole (examiner.core.owned), so a stop or kill leaves no half-written report."""
    from examiner.reporting.provenance import build_provenance
    from examiner.reporting import build_report

    refuse_links(Path(run_dir))

    health = exam_health(RunDir(run_dir).read())
    paths = dict(build_report(run_dir, map_rounds=map_rounds, health=health.to_dict()))
    graph = build_provenance(run_dir)
    if graph is not None:  # None: over the size limit, which report.json and report.md say
        paths["provenance"] = graph
    return paths
