"""The size limit of provenance.graphml, checked from a run's records before the graph is built.

Apart from examiner/reporting/provenance.py so that the reports can say whether the graph was written without
importing networkx (and without an import cycle: provenance.py reads runs through the reports' store).
"""

from __future__ import annotations

from typing import Any

from examiner.core.rundir import PROVENANCE
from examiner.reporting.run_reader import RunData

GRAPHML_MAX_NODES = 20_000
"""provenance.graphml is written only when the graph has at most this many nodes (documents, passages, units,
questions, answers and verdicts together); a larger run's report says it was skipped and why."""


def graph_nodes(run: RunData) -> int:
    """How many nodes the provenance graph of `run` has, counted from the records without building it."""
    sources = [src for unit in run.units.values() for src in unit.sources]
    return (len({s.document for s in sources}) + len({s.passage_id for s in sources}) + len(run.units)
            + len(run.questions) + len(run.answers) + len(run.verdicts))


def provenance_plan(run: RunData) -> dict[str, Any]:
    """Whether provenance.graphml is written for `run`, with the node count, the limit and a note saying why."""
    nodes = graph_nodes(run)
    written = nodes <= GRAPHML_MAX_NODES
    note = (f"{PROVENANCE}: {nodes} nodes" if written else
            f"{PROVENANCE} not written: the graph would have {nodes} nodes, over the limit of "
            f"{GRAPHML_MAX_NODES} that graph tools open comfortably; `examiner trace RUN_DIR UNIT_ID` "
            "follows a unit or question through the run's records instead")
    return {"file": PROVENANCE, "nodes": nodes, "limit": GRAPHML_MAX_NODES, "written": written, "note": note}
