"""Loaders of the validation sets shipped in examiner/data return the documented counts and fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from examiner.corpus import benchmarks as ds
from examiner.core.errors import UserError


def test_pubmedqa() -> None:
    items = ds.load_pubmedqa()
    assert len(items) == 1000
    test = ds.load_pubmedqa("test")
    assert len(test) == 500 and all(i.in_test for i in test)
    gold = ds.pubmedqa_test_decisions()
    assert all(gold[i.pubid] == i.final_decision for i in test)
    assert {i.final_decision for i in items} == {"yes", "no", "maybe"}
    first = items[0]
    assert first.question and first.long_answer and len(first.contexts) == len(first.labels) >= 1
    corpus = ds.pubmedqa_corpus(items[:3])
    assert len(corpus.documents) == 3 and len(corpus.passages) == sum(len(i.contexts) for i in items[:3])


def test_wikitext2() -> None:
    valid = ds.load_wikitext2("valid")
    assert len(valid) == 60 and len(ds.load_wikitext2("test")) == 62
    lobster = valid[0]
    assert lobster.title == "Homarus gammarus" and "Description" in lobster.sections
    assert "@" not in lobster.text and " = " not in lobster.text
    assert "0.7" in lobster.text and "(24 in)" in lobster.text
    assert ds.detokenize_wikitext("a 1 @,@ 000 @-@ year span of 2 @.@ 5 m , said", light=False) == \
        "a 1,000-year span of 2.5 m , said"


def test_legalbench_definitions() -> None:
    rows = ds.load_legalbench_definitions()
    extraction = [r for r in rows if r.task == "definition_extraction"]
    classification = [r for r in rows if r.task == "definition_classification"]
    assert len(extraction) == 8 and len(classification) == 8
    assert extraction[0].term == "land" and extraction[0].is_definition is None
    assert [r.is_definition for r in classification].count(True) == 4


def test_summeval() -> None:
    rows = ds.load_summeval()
    assert len(rows) == 1600
    assert len({r.doc_id for r in rows}) == 100 and len({r.system_id for r in rows}) == 16
    assert all(set(r.scores) == set(ds.SUMMEVAL_ASPECTS) for r in rows)
    assert all(len(r.references) == 11 and r.summary for r in rows[:50])


def test_llmbar() -> None:
    natural = ds.load_llmbar(["Natural"])
    assert len(natural) == 100 and {p.label for p in natural} == {1, 2}
    counts = {name: len(ds.load_llmbar([name])) for name in ds.LLMBAR_SUBSETS}
    assert counts == {"Natural": 100, "Adversarial_Neighbor": 134, "Adversarial_GPTInst": 92,
                      "Adversarial_GPTOut": 47, "Adversarial_Manual": 46, "Processed_MT-Bench_200": 200,
                      "Processed_FairEval": 66, "Processed_LLMEval2": 200}
    assert natural[3].id == "Natural/3"
    with pytest.raises(UserError, match="unknown LLMBar subset"):
        ds.load_llmbar(["Nope"])


def test_mt_bench() -> None:
    questions = ds.load_mt_bench()
    assert len(questions) == 80 and all(len(q.turns) == 2 for q in questions)
    with_ref = [q for q in questions if q.reference]
    assert len(with_ref) == 30 and {q.category for q in with_ref} == {"math", "reasoning", "coding"}


def test_data_root_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EXAMINER_DATA", str(tmp_path / "missing"))
    with pytest.raises(UserError, match="EXAMINER_DATA"):
        ds.data_root()
    monkeypatch.setenv("EXAMINER_DATA", str(tmp_path))
    assert ds.data_root() == tmp_path
    with pytest.raises(UserError, match="missing"):
        ds.load_mt_bench()
