"""Loaders of the public validation sets: fields, splits and joins on the invented stand-ins of
tests/fixtures/data; the real sets' documented counts where the data folder holds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from examiner.corpus import benchmarks as ds
from examiner.core.errors import UserError
from tests.helpers.datasets import requires_real_data


@pytest.mark.usefixtures("fixture_data")
def test_pubmedqa() -> None:
    items = ds.load_pubmedqa()
    assert len(items) == 30 and items[0].pubid == "910000"
    test = ds.load_pubmedqa("test")
    assert len(test) == 15 and all(i.in_test for i in test)
    assert [i.pubid for i in items if i.in_test] == [i.pubid for i in test]  # file order, test ids only
    gold = ds.pubmedqa_test_decisions()
    assert set(gold) == {i.pubid for i in test} and all(gold[i.pubid] == i.final_decision for i in test)
    assert {i.final_decision for i in items} == {"yes", "no", "maybe"}
    first = items[0]
    assert first.question.startswith("Does daily stretching") and first.long_answer
    assert first.labels == ("BACKGROUND", "METHODS", "SETTING", "RESULTS") and len(first.contexts) == 4
    assert first.year == "2011" and "Neck pain" in first.meshes
    corpus = ds.pubmedqa_corpus(items[:3])
    assert [d.id for d in corpus.documents] == [f"pubmedqa/{i.pubid}" for i in items[:3]]
    assert len(corpus.passages) == sum(len(i.contexts) for i in items[:3])
    with pytest.raises(ValueError, match="split"):
        ds.load_pubmedqa("train")


@pytest.mark.usefixtures("fixture_data")
def test_wikitext2() -> None:
    valid = ds.load_wikitext2("valid")
    assert [a.title for a in valid] == ["Tarn Mill Bridge", "Velder Lighthouse", "Orrin Castell"]
    assert [a.title for a in ds.load_wikitext2("test")] == ["Brightwater Canal", "Hedda Lorne"]
    bridge = valid[0]
    assert bridge.sections == ("Description", "History", "Construction", "Later use")
    assert "@" not in bridge.text and " = " not in bridge.text and "Construction" not in bridge.text
    assert "0.7 metres" in bridge.text and "(38 ft)" in bridge.text and "£ 1,200" in bridge.text
    assert len(bridge.text.split("\n\n")) == 5  # one paragraph per line of the file
    raw = ds.load_wikitext2("valid", light_detokenize=False)[0]
    assert "(38 ft )" not in raw.text and "( 38 ft )" in raw.text
    assert ds.detokenize_wikitext("a 1 @,@ 000 @-@ year span of 2 @.@ 5 m , said", light=False) == \
        "a 1,000-year span of 2.5 m , said"
    corpus = ds.wikitext_corpus(valid)
    assert [d.id for d in corpus.documents] == [f"wikitext2/{a.title}" for a in valid]
    with pytest.raises(ValueError, match="split"):
        ds.load_wikitext2("train")


@pytest.mark.usefixtures("fixture_data")
def test_legalbench_definitions() -> None:
    rows = ds.load_legalbench_definitions()
    extraction = [r for r in rows if r.task == "definition_extraction"]
    classification = [r for r in rows if r.task == "definition_classification"]
    assert len(extraction) == 4 and len(classification) == 4 and rows[:4] == extraction
    assert extraction[0].term == "harbour" and extraction[0].is_definition is None
    assert extraction[0].text.startswith("As the statute uses it") and extraction[3].index == 3
    assert [r.is_definition for r in classification] == [True, False, True, False]
    assert all(r.term is None for r in classification)


@pytest.mark.usefixtures("fixture_data")
def test_summeval() -> None:
    rows = ds.load_summeval()
    assert len(rows) == 24
    assert len({r.doc_id for r in rows}) == 4 and len({r.system_id for r in rows}) == 6
    assert all(set(r.scores) == set(ds.SUMMEVAL_ASPECTS) for r in rows)
    assert all(len(r.references) == 11 and r.references[0] == r.reference and r.summary for r in rows)
    first = rows[0]
    assert (first.doc_id, first.system_id) == ("fx-test-library-reopens", "M1")
    assert first.summary.startswith("The town library of Marrowby") and first.source.startswith(first.summary)
    assert first.scores == pytest.approx({"coherence": 11 / 3, "consistency": 5.0, "fluency": 14 / 3,
                                          "relevance": 10 / 3})


@pytest.mark.usefixtures("fixture_data")
def test_llmbar() -> None:
    natural = ds.load_llmbar(["Natural"])
    assert len(natural) == 16 and {p.label for p in natural} == {1, 2}
    counts = {name: len(ds.load_llmbar([name])) for name in ds.LLMBAR_SUBSETS}
    assert counts == {"Natural": 16, "Adversarial_Neighbor": 40, "Adversarial_GPTInst": 6, "Adversarial_GPTOut": 6,
                      "Adversarial_Manual": 6, "Processed_MT-Bench_200": 6, "Processed_FairEval": 6,
                      "Processed_LLMEval2": 6}
    assert natural[3].id == "Natural/3" and natural[3].input.startswith("Name one common mistake")
    both = ds.load_llmbar(["Processed_FairEval", "Natural"])  # in the order asked for
    assert [p.subset for p in both] == ["Processed_FairEval"] * 6 + ["Natural"] * 16
    assert len(ds.load_llmbar()) == sum(counts.values())
    with pytest.raises(UserError, match="unknown LLMBar subset"):
        ds.load_llmbar(["Nope"])


@pytest.mark.usefixtures("fixture_data")
def test_mt_bench() -> None:
    questions = ds.load_mt_bench()
    assert [q.question_id for q in questions] == [81, 91, 101, 111, 121, 131]
    assert all(len(q.turns) == 2 for q in questions)
    with_ref = [q for q in questions if q.reference]
    assert [q.category for q in with_ref] == ["reasoning", "math", "coding"]
    assert all(len(q.reference or ()) == 2 for q in with_ref)
    assert questions[3].reference is not None and questions[3].reference[0].endswith("54 square cm.")


def test_data_root_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EXAMINER_DATA", str(tmp_path / "missing"))
    with pytest.raises(UserError, match="EXAMINER_DATA"):
        ds.data_root()
    monkeypatch.setenv("EXAMINER_DATA", str(tmp_path))
    assert ds.data_root() == tmp_path
    with pytest.raises(UserError, match='examiner data pull mt_bench'):
        ds.load_mt_bench()


# --- the real sets' documented counts ----------------------------------------------------------------------

@requires_real_data("pubmedqa")
def test_real_pubmedqa_counts() -> None:
    items = ds.load_pubmedqa()
    assert len(items) == 1000 and len(ds.load_pubmedqa("test")) == 500
    assert {i.final_decision for i in items} == {"yes", "no", "maybe"}


@requires_real_data("wikitext2")
def test_real_wikitext2_counts() -> None:
    valid = ds.load_wikitext2("valid")
    assert len(valid) == 60 and len(ds.load_wikitext2("test")) == 62
    lobster = valid[0]
    assert lobster.title == "Homarus gammarus" and "Description" in lobster.sections
    assert "@" not in lobster.text and "0.7" in lobster.text and "(24 in)" in lobster.text


@requires_real_data("legalbench")
def test_real_legalbench_counts() -> None:
    rows = ds.load_legalbench_definitions()
    extraction = [r for r in rows if r.task == "definition_extraction"]
    classification = [r for r in rows if r.task == "definition_classification"]
    assert len(extraction) == 8 and len(classification) == 8
    assert extraction[0].term == "land" and [r.is_definition for r in classification].count(True) == 4


@requires_real_data("summeval")
def test_real_summeval_counts() -> None:
    rows = ds.load_summeval()
    assert len(rows) == 1600
    assert len({r.doc_id for r in rows}) == 100 and len({r.system_id for r in rows}) == 16
    assert all(len(r.references) == 11 for r in rows)


@requires_real_data("llmbar")
def test_real_llmbar_counts() -> None:
    counts = {name: len(ds.load_llmbar([name])) for name in ds.LLMBAR_SUBSETS}
    assert counts == {"Natural": 100, "Adversarial_Neighbor": 134, "Adversarial_GPTInst": 92,
                      "Adversarial_GPTOut": 47, "Adversarial_Manual": 46, "Processed_MT-Bench_200": 200,
                      "Processed_FairEval": 66, "Processed_LLMEval2": 200}


@requires_real_data("mt_bench")
def test_real_mt_bench_counts() -> None:
    questions = ds.load_mt_bench()
    assert len(questions) == 80 and all(len(q.turns) == 2 for q in questions)
    with_ref = [q for q in questions if q.reference]
    assert len(with_ref) == 30 and {q.category for q in with_ref} == {"math", "reasoning", "coding"}
