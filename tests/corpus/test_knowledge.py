"""Knowledge units: segmentation, token bounds, stable ids, provenance, near-duplicate merging."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.corpus.reading import corpus_from_texts
from examiner.corpus.units import (
    KnowledgeUnit,
    load_units,
    make_unit,
    merge_near_duplicates,
    near_duplicate_groups,
    save_units,
    sentence_units,
    split_long_unit,
    unit_id,
    unit_rows,
    units_from_statements,
)
from examiner.corpus.sentences import split_sentences
from examiner.core.tokens import count_tokens


def test_segmentation_respects_abbreviations_and_decimals() -> None:
    text = ("Dr. Smith moved to the U.S. Army base, e.g. the one near Austin. The dose was 3.5 mg per day! "
            "Was it enough? See No. 5 and Fig. 2 for details. A. madagascariensis grows in water, i.e. in ponds. "
            "Results were reported by Jones et al. in 2019. \"Quoted.\" (Bracketed.) It ends here.")
    assert split_sentences(text) == [
        "Dr. Smith moved to the U.S. Army base, e.g. the one near Austin.",
        "The dose was 3.5 mg per day!",
        "Was it enough?",
        "See No. 5 and Fig. 2 for details.",
        "A. madagascariensis grows in water, i.e. in ponds.",
        "Results were reported by Jones et al. in 2019.",
        "\"Quoted.\"",
        "(Bracketed.)",
        "It ends here.",
    ]


def test_segmentation_lists_and_numbers() -> None:
    assert split_sentences("It grew in 2010. The next year it shrank.") == [
        "It grew in 2010.", "The next year it shrank."]
    assert split_sentences("Steps:\n- mix the flour\n- add water") == ["Steps:", "- mix the flour", "- add water"]
    assert split_sentences("lower case after a stop. does not split") == ["lower case after a stop. does not split"]


def test_units_have_provenance_spans() -> None:
    text = "Short one. Another short one. Paris is the capital of France and its largest city by far.\n\nNext."
    corpus = corpus_from_texts([("doc", text)])
    units = sentence_units(corpus, max_tokens=80, min_tokens=6)
    doc = corpus.documents[0]
    for u in units:
        (src,) = u.sources
        assert " ".join(doc.text[src.start:src.end].split()) == u.text
        passage = corpus.passage(src.passage_id)
        assert passage.start <= src.start < src.end <= passage.end
    # the two short sentences are merged; the lone short passage stays a unit of its own
    assert [u.text for u in units] == [
        "Short one. Another short one.",
        "Paris is the capital of France and its largest city by far.",
        "Next.",
    ]


def test_token_bound_is_respected() -> None:
    long_sentence = ("The committee, after long deliberation over many months; reviewing evidence from witnesses, "
                     "experts and documents: concluded that " + "the policy was sound and fair " * 30 + "overall.")
    corpus = corpus_from_texts([("d", long_sentence + " A normal sentence follows it here.")])
    units = sentence_units(corpus, max_tokens=20, min_tokens=4)
    assert len(units) > 5
    assert all(u.token_count <= 20 and u.token_count == count_tokens(u.text) for u in units)
    doc = corpus.documents[0]
    for u in units:
        for s in u.sources:
            assert " ".join(doc.text[s.start:s.end].split()) == u.text
    # repeated chunks collapse into one unit with several sources; together the spans cover the text
    spans = sorted((s.start, s.end) for u in units for s in u.sources)
    assert " ".join(doc.text[a:b] for a, b in spans).split() == doc.text.split()


def test_split_long_unit_covers_text_within_bound() -> None:
    text = "alpha beta, gamma delta; " * 40 + "x" * 300
    pieces = split_long_unit(text, 15)
    assert all(count_tokens(p) <= 15 for p in pieces)
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
    assert split_long_unit("short text", 15) == ["short text"]
    assert split_long_unit("   ", 15) == []


def test_ids_are_stable_content_hashes() -> None:
    assert unit_id("Paris is in France.") == unit_id("  paris IS in\nFrance. ")
    assert unit_id("Paris is in France.") != unit_id("Lyon is in France.")
    assert unit_id("Paris is in France.") == "ku-" + __import__("hashlib").sha256(b"paris is in france.").hexdigest()[:16]
    corpus = corpus_from_texts([("a", "The sky is blue on clear days."), ("b", "The sky is blue on clear days.")])
    (unit,) = sentence_units(corpus)
    assert [s.document for s in unit.sources] == ["a", "b"]  # exact duplicates merged, both sources kept
    assert sentence_units(corpus) == [unit]


def test_units_from_statements() -> None:
    corpus = corpus_from_texts([("d", "Water boils at 100 degrees at sea level.\n\nIce melts at zero.")])
    p1, p2 = corpus.passages
    units = units_from_statements([(p1, "Water boils at 100 °C at sea level."), (p2, "Ice melts at 0 °C."),
                                   (p2, "water boils at 100 °C at sea level."), (p1, "  ")])
    assert len(units) == 2
    assert [(s.passage_id, s.start, s.end) for s in units[0].sources] == [(p1.id, p1.start, p1.end),
                                                                         (p2.id, p2.start, p2.end)]


def test_near_duplicate_merge_keeps_all_sources() -> None:
    corpus = corpus_from_texts([("d", "A cat sat on the mat today.\n\nThe cat sat on a mat today.\n\n"
                                      "A feline sat on the mat today.\n\nStocks fell sharply on Monday.")])
    units = sentence_units(corpus, min_tokens=1)
    assert len(units) == 4
    v = np.array([[1, 0, 0], [0.99, 0.1, 0], [0.98, 0.0, 0.2], [0, 1, 0]], dtype=np.float32)
    merged = merge_near_duplicates(units, v, threshold=0.95)
    assert len(merged) == 2
    first, last = merged
    assert {s.passage_id for s in first.sources} == {p.id for p in corpus.passages[:3]}
    assert first.text == units[0].text  # most central member of the group
    assert last == units[3]
    assert merge_near_duplicates(units, v, threshold=0.95) == merged  # deterministic
    assert near_duplicate_groups(v, 0.999) == [[0], [1], [2], [3]]
    with pytest.raises(ValueError):
        merge_near_duplicates(units, v[:2])
    scaled = v.copy()
    assert merge_near_duplicates(units, scaled, threshold=0.95, scale_in_place=True) == merged
    assert np.array_equal(scaled, unit_rows(v)), "scaled where they are, to the same numbers"
    assert not np.array_equal(v, unit_rows(v)), "without it, the caller's vectors are left as they were"


def test_unit_rows_in_place_only_on_a_writable_float32_array() -> None:
    """The copy and the in-place scaling give the same numbers; input that cannot be scaled where it is (other
    dtype, read-only) is copied, never changed."""
    v = np.array([[3, 4], [0, 0], [1, 1e-3]], dtype=np.float32)
    copied = unit_rows(v)
    same = v.copy()
    assert unit_rows(same, in_place=True) is same and np.array_equal(same, copied)
    as_float64 = v.astype(np.float64)
    assert np.array_equal(unit_rows(as_float64, in_place=True), copied)
    assert np.array_equal(as_float64, v.astype(np.float64))
    frozen = v.copy()
    frozen.flags.writeable = False
    assert np.array_equal(unit_rows(frozen, in_place=True), copied) and np.array_equal(frozen, v)


def test_save_and_load_units(tmp_path) -> None:
    units = sentence_units(corpus_from_texts([("d", "One statement that is long enough here.\n\nAnd a second one.")]))
    save_units(tmp_path / "units.jsonl", units)
    assert load_units(tmp_path / "units.jsonl") == units
    assert isinstance(units[0], KnowledgeUnit)
    assert make_unit("  spaced   text ", units[0].sources).text == "spaced text"


def test_sample_corpus_unit_count() -> None:
    from pathlib import Path

    from examiner.corpus.reading import load_corpus

    root = Path(__file__).resolve().parents[2] / "corpora"
    n_harbor = len(sentence_units(load_corpus([root / "harbor-water"])))
    n_handbook = len(sentence_units(load_corpus([root / "examiner-handbook"])))
    assert n_harbor == 185, "corpora/harbor-water/SOURCE.md and the README's worked example quote 185 units"
    assert 40 <= n_handbook <= 60
