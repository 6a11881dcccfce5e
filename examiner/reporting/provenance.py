"""The provenance graph of a run: document -> passage -> unit -> question -> answer -> verdict.

Why a graph: a verdict is only worth as much as the reference text behind it. The graph lets anyone walk
from any verdict back to the exact characters of the source document it was judged against (`trace`),
and it is written as GraphML so that other tools (Gephi, yEd, networkx) can open it.

Node ids are prefixed by kind (`doc:`, `passage:`, `unit:`, `question:`, `answer:`, `verdict:`); every
node has `kind`, `record_id` and `text` (an excerpt) attributes, and every edge a `type`:
contains (document -> passage), states (passage -> unit), asks (unit -> question), follows_up (question ->
probe), answered_by (question -> answer), judged_as (answer -> verdict), about (unit -> verdict).

GraphML is written only up to GRAPHML_MAX_NODES nodes (examiner/reporting/graph_limit.py): above that the
file (hundreds of MB at 200,000 units) opens in no graph tool, and `examiner trace RUN_DIR ID` answers
the same question from the run's records.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import networkx as nx

from examiner.core.rundir import PROVENANCE
from examiner.reporting.graph_limit import provenance_plan
from examiner.reporting.run_reader import RunData, load_run
from examiner.reporting.summary import PassageReader, excerpt

TEXT_CHARS = 300

_NOT_XML = re.compile("[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")
"""Characters XML 1.0 cannot hold at all, escaped or not (NUL, other C0 controls, lone surrogates, U+FFFE/F)."""


def xml_safe(text: str) -> str:
    """`text` with the characters XML 1.0 cannot hold replaced by U+FFFD: a record read from an older run
    (or a corpus file holding an escaped NUL) still makes a GraphML file that every reader opens."""
    return _NOT_XML.sub("\uFFFD", text)


def _attrs(**values: Any) -> dict[str, Any]:
    """GraphML takes scalars of one type per key: None is left out, lists become comma-joined strings;
    text is made XML-safe."""
    out = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple, set)):
            value = ",".join(map(str, value))
        out[key] = xml_safe(value) if isinstance(value, str) else value
    return out


def _safe_ids(graph: nx.DiGraph) -> nx.DiGraph:
    """The graph with XML-safe node ids and edge attributes (ids come from the records: documents are
    named by their paths, and ids of records are free text in an older run)."""
    if all(not _NOT_XML.search(str(node)) for node in graph):
        mapping = None
    else:
        mapping = {node: xml_safe(str(node)) for node in graph}
    out = nx.relabel_nodes(graph, mapping, copy=True) if mapping else graph
    for _, _, data in out.edges(data=True):
        for key, value in data.items():
            if isinstance(value, str):
                data[key] = xml_safe(value)
    return out


def provenance_graph(run: RunData) -> nx.DiGraph:
    """The graph of one run (in memory)."""
    g = nx.DiGraph()
    reader = PassageReader(run)
    for unit in run.units.values():
        uid = f"unit:{unit.id}"
        g.add_node(uid, **_attrs(kind="unit", record_id=unit.id, text=excerpt(unit.text, TEXT_CHARS),
                                 token_count=unit.token_count))
        for src in unit.sources:
            doc, passage = f"doc:{src.document}", f"passage:{src.passage_id}"
            if doc not in g:
                g.add_node(doc, **_attrs(kind="document", record_id=src.document, text=src.document))
            if passage not in g:
                found = reader.source(src.document, src.passage_id, src.start, src.end)
                g.add_node(passage, **_attrs(kind="passage", record_id=src.passage_id, document=src.document,
                                             text=excerpt(found["passage_text"], TEXT_CHARS) if found else "",
                                             start=found["passage_start"] if found else None,
                                             end=found["passage_end"] if found else None))
                g.add_edge(doc, passage, type="contains")
            g.add_edge(passage, uid, type="states", start=src.start, end=src.end)
    for q in run.questions.values():
        qid = f"question:{q.id}"
        g.add_node(qid, **_attrs(kind="question", record_id=q.id, text=excerpt(q.text, TEXT_CHARS), round=q.round,
                                 target=q.target, cluster_id=q.cluster_id, question_kind=q.kind, qtype=q.qtype,
                                 status=q.status))
        for unit_id in q.targets:
            if f"unit:{unit_id}" in g:
                g.add_edge(f"unit:{unit_id}", qid, type="asks")
    for q in run.questions.values():
        if q.parent_id and f"question:{q.parent_id}" in g:
            g.add_edge(f"question:{q.parent_id}", f"question:{q.id}", type="follows_up")
    for a in run.answers.values():
        aid = f"answer:{a.id}"
        g.add_node(aid, **_attrs(kind="answer", record_id=a.id, text=excerpt(a.text, TEXT_CHARS), round=a.round,
                                 target=a.target, question_id=a.question_id, bleu=a.bleu,
                                 embedding_similarity=a.embedding_similarity))
        if f"question:{a.question_id}" in g:
            g.add_edge(f"question:{a.question_id}", aid, type="answered_by")
    for v in run.verdicts.values():
        vid = f"verdict:{v.id}"
        g.add_node(vid, **_attrs(kind="verdict", record_id=v.id, text=excerpt(v.reason, TEXT_CHARS), label=v.verdict,
                                 round=v.round, target=v.target, unit_id=v.unit_id, answer_id=v.answer_id,
                                 question_id=v.question_id, mode=v.mode))
        if f"answer:{v.answer_id}" in g:
            g.add_edge(f"answer:{v.answer_id}", vid, type="judged_as")
        if f"unit:{v.unit_id}" in g:
            g.add_edge(f"unit:{v.unit_id}", vid, type="about")
    return g


def build_provenance(run_dir: str | Path) -> Path | None:
    """Write provenance.graphml into the run directory and return its path; None when the graph is over
    the size limit (report/graph_limit.py); an older graphml of the run is removed then, as it would no
    longer match the records."""
    run = load_run(run_dir)
    path = run.path / PROVENANCE
    if not provenance_plan(run)["written"]:
        path.unlink(missing_ok=True)
        return None
    nx.write_graphml(_safe_ids(provenance_graph(run)), path)
    return path


def load_provenance(path: str | Path) -> nx.DiGraph:
    return nx.read_graphml(path)


def _pred(graph: nx.DiGraph, node: str, edge_type: str) -> str | None:
    for p in graph.predecessors(node):
        if graph.edges[p, node].get("type") == edge_type:
            return p
    return None


def _walk_back(graph: nx.DiGraph, node: str, edge_types: tuple[str, ...]) -> list[str]:
    """The nodes reached from `node` by following each edge type backwards in turn, stopping at the
    first link the graph lacks."""
    path: list[str] = []
    for edge_type in edge_types:
        found = _pred(graph, node, edge_type)
        if found is None:
            break
        path.append(found)
        node = found
    return path


def trace(graph: nx.DiGraph, verdict_id: str) -> list[dict[str, Any]]:
    """The chain verdict -> answer -> question -> unit -> passage -> document, as node attribute dicts.

    `verdict_id` may be the record id or the node id (`verdict:...`). A link the run never wrote (e.g. an
    answer record lost to a kill) ends the chain early rather than guessing.
    """
    node = verdict_id if verdict_id.startswith("verdict:") else f"verdict:{verdict_id}"
    if node not in graph:
        raise KeyError(f"no verdict {verdict_id} in the provenance graph")
    chain = [node]
    chain += _walk_back(graph, node, ("judged_as", "answered_by"))
    chain += _walk_back(graph, node, ("about", "states", "contains"))
    return [{"id": n, **graph.nodes[n]} for n in chain]


__all__ = ["provenance_graph", "build_provenance", "load_provenance", "trace"]
