"""`unit_mode: llm` keeps every passage: batches fit the examiner's output limit, cut replies split their
batch, and passages that still give no unit are listed (run.json, reports), never silently lost."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.core.tokens import count_tokens
from examiner.corpus.reading import load_corpus
from examiner.exam import extraction
from examiner.llm.ledger import answered
from examiner.agents.examiner.extractor import extract_statements


def documents_with_units(run_dir: Path) -> set[str]:
    rows = [json.loads(line) for line in (run_dir / rundir.UNITS).read_text(encoding="utf-8").splitlines()]
    return {source["document"] for row in rows for source in row["sources"]}


def test_llm_units_come_from_every_document(tmp_path: Path) -> None:
    """The acceptance run: `examiner run corpora/harbor-water --simulate --units llm` (on the 12-abstract
    sample corpus of the time it gave units from 2 of the 12 documents): every document ends up with
    units, none skipped."""
    run_dir = tmp_path / "run"
    assert main(["run", "corpora/harbor-water", "--simulate", "--units", "llm", "--max-rounds", "1",
                 "--out", str(run_dir), "--quiet"]) == 0
    info = json.loads((run_dir / rundir.RUN_INFO).read_text())
    assert info["documents"] == 30 and info["skipped_passages"] == []
    assert len(documents_with_units(run_dir)) == 30
    report = json.loads((run_dir / rundir.REPORT_JSON).read_text())
    assert report["counts"]["skipped_passages"] == 0


def test_passages_that_give_no_unit_are_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an output limit a long passage's statements cannot fit, that passage is split down to itself,
    then listed as skipped with the reason, in run.json and every report; the short ones give units."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    long = " ".join(f"The survey counted {n} herons on the northern shore in the spring of year {n}." for n in range(12))
    (corpus / "a.txt").write_text("Herons nest in tall trees near water.\n\n" + long + "\n\nEgrets are smaller herons.\n",
                                  encoding="utf-8")
    monkeypatch.setattr(extraction, "extract_statements", functools.partial(extract_statements, max_tokens=60))
    run_dir = tmp_path / "run"
    assert main(["run", str(corpus), "--simulate", "--units", "llm", "--max-rounds", "1", "--out", str(run_dir),
                 "--quiet"]) == 0
    info = json.loads((run_dir / rundir.RUN_INFO).read_text())
    long_passage = next(p for p in load_corpus([str(corpus)]).passages if p.text.startswith("The survey"))
    assert info["skipped_passages"] == [{"document": long_passage.document, "passage_id": long_passage.id,
                                         "reason": "reply cut at the output limit (60 tokens)"}]
    assert info["units"] >= 2
    calls = [r for r in answered(RunDir(run_dir).ledger_records()) if r.stage == "extract_units"]
    assert calls[0].finish_reason == "length" and len(calls) == 5, "the batch of 3 is split: 1 | (1 | 1)"
    report = json.loads((run_dir / rundir.REPORT_JSON).read_text())
    assert report["counts"]["skipped_passages"] == 1
    assert long_passage.id in (run_dir / rundir.REPORT_MD).read_text()
    assert long_passage.id in (run_dir / rundir.REPORT_HTML).read_text()


def test_no_unit_at_all_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every passage skipped: the error gives the first reason and run.json lists every passage."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Herons nest in tall trees near water.\n\nEgrets are smaller herons.\n", encoding="utf-8")
    monkeypatch.setattr(extraction, "extract_statements", functools.partial(extract_statements, max_tokens=3))
    run_dir = tmp_path / "run"
    assert main(["run", str(corpus), "--simulate", "--units", "llm", "--out", str(run_dir), "--quiet"]) != 0
    assert "reply cut at the output limit (3 tokens)" in capsys.readouterr().err
    info = json.loads((run_dir / rundir.RUN_INFO).read_text())
    assert len(info["skipped_passages"]) == 2


def test_batches_fit_the_output_limit_and_the_context() -> None:
    assert extraction.batch_budget(8192, max_tokens=1600) == 1000
    assert extraction.batch_budget(2048, max_tokens=1500) == 2048 - 1500 - extraction.PROMPT_OVERHEAD_TOKENS
    passages = load_corpus(["corpora/harbor-water"]).passages
    for batch in extraction.batches(passages, 300):
        assert len(batch) == 1 or sum(count_tokens(p.text) for p in batch) <= 300
    assert [p for b in extraction.batches(passages, 300) for p in b] == passages


@pytest.mark.local_model
def test_embedded_model_gives_units_or_lists_what_it_skipped(tmp_path: Path) -> None:
    """The embedded model in llm unit mode: the run goes on with the units it could extract, and every
    passage without one is listed with its reason (it used to fail with "no knowledge units"). Three
    passages of the handbook's first page: each model call costs seconds on a CPU, and the whole page
    took over four minutes of the suite for nothing more."""
    pytest.importorskip("llama_cpp")
    page = Path("corpora/examiner-handbook/01-exam.md").read_text(encoding="utf-8")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "01-exam.md").write_text("\n\n".join(page.split("\n\n")[:3]) + "\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    code = main(["run", str(corpus), "--units", "llm", "--max-rounds", "1", "--out", str(run_dir), "--quiet"])
    info = json.loads((run_dir / rundir.RUN_INFO).read_text())
    assert code == 0, info["stop_reason"]
    assert info["units"] > 0
    listed = {s["passage_id"] for s in info["skipped_passages"]}
    with_units = {source["passage_id"] for row in (run_dir / rundir.UNITS).read_text().splitlines()
                  for source in json.loads(row)["sources"]}
    passages = {p.id for p in load_corpus([str(corpus)]).passages}
    assert len(passages) >= 2 and listed | with_units == passages
    assert all(s["reason"] for s in info["skipped_passages"])
