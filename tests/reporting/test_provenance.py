"""The provenance graph: every verdict traces back through answer, question and unit to the source
passage and document, also after the graph went through a GraphML file. Each test builds what it reads,
so the tests pass alone, in any order."""

from __future__ import annotations

from pathlib import Path

import pytest

from examiner.reporting.provenance import build_provenance, load_provenance, provenance_graph, trace
from examiner.reporting import load_run
from tests.helpers.sample_run import write_sample_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prov")
    return write_sample_run(root / "run", root / "corpus", with_passages=True)


def test_every_verdict_traces_to_its_document(run_dir: Path) -> None:
    run = load_run(run_dir)
    graph = load_provenance(build_provenance(run_dir))
    for verdict in run.verdicts.values():
        chain = trace(graph, verdict.id)
        assert [n["kind"] for n in chain] == ["verdict", "answer", "question", "unit", "passage", "document"]
        unit = run.units[verdict.unit_id]
        assert chain[1]["record_id"] == verdict.answer_id
        assert chain[2]["record_id"] == verdict.question_id
        assert chain[3]["record_id"] == verdict.unit_id
        assert chain[4]["record_id"] == unit.sources[0].passage_id
        assert chain[5]["record_id"] == unit.sources[0].document


def test_incorrect_verdict_chain_carries_texts(run_dir: Path) -> None:
    run = load_run(run_dir)
    graph = load_provenance(build_provenance(run_dir))  # its own file: no test relies on another's output
    verdict = next(v for v in run.verdicts.values() if v.verdict == "incorrect")
    chain = trace(graph, f"verdict:{verdict.id}")
    assert chain[0]["label"] == "incorrect" and chain[0]["text"] == verdict.reason
    passage = chain[4]
    assert run.units[verdict.unit_id].text in passage["text"]
    assert passage["start"] <= run.units[verdict.unit_id].sources[0].start


def test_graph_shape_and_edge_types(run_dir: Path) -> None:
    run = load_run(run_dir)
    graph = provenance_graph(run)
    kinds = {}
    for _, data in graph.nodes(data=True):
        kinds[data["kind"]] = kinds.get(data["kind"], 0) + 1
    assert kinds["unit"] == len(run.units) and kinds["verdict"] == len(run.verdicts)
    assert kinds["document"] == 2 and kinds["question"] == len(run.questions)
    types = {d["type"] for *_, d in graph.edges(data=True)}
    assert types == {"contains", "states", "asks", "answered_by", "judged_as", "about"}


def test_unknown_verdict_raises(run_dir: Path) -> None:
    with pytest.raises(KeyError):
        trace(provenance_graph(load_run(run_dir)), "v-missing")
