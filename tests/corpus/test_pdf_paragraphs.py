"""A PDF page comes back as its paragraphs, not as one passage (issue 29, finding 5): wrapped lines are
joined, paragraphs split at gaps, short last lines, font changes and list items; no passage of a paged
document is longer than MAX_PAGED_PASSAGE_CHARS where sentence ends allow; units and the review page still
trace to passages with their pages. Fixture: tests/fixtures/layout/handbook.pdf (make_documents.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from examiner.cli.main import main
from examiner.corpus.documents.pdf_paragraphs import Line, paragraphs
from examiner.corpus.reading import MAX_PAGED_PASSAGE_CHARS, load_corpus, make_document
from examiner.corpus.units import sentence_units
from examiner.reporting.review import review_rows
from examiner.reporting.run_reader import load_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HANDBOOK = FIXTURES / "layout" / "handbook.pdf"


def _fixture_texts() -> object:
    spec = importlib.util.spec_from_file_location("make_documents", FIXTURES / "make_documents.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_documents", module)
    spec.loader.exec_module(module)
    return module


def test_a_pdf_page_is_read_as_its_paragraphs() -> None:
    made = _fixture_texts()
    doc = load_corpus(HANDBOOK).documents[0]
    first_page = [p.text for p in doc.passages if p.page == 1]
    assert first_page == ["Cooling system", *made.HANDBOOK_PARAGRAPHS, *made.HANDBOOK_NO_GAP, *made.HANDBOOK_LIST]
    for p in doc.passages:
        assert doc.text[p.start:p.end] == p.text


def test_a_page_long_paragraph_is_cut_at_sentence_ends() -> None:
    made = _fixture_texts()
    second = [p for p in load_corpus(HANDBOOK).documents[0].passages if p.page == 2]
    assert len(second) >= 3
    assert all(len(p.text) <= MAX_PAGED_PASSAGE_CHARS for p in second)
    assert " ".join(p.text for p in second) == " ".join(made.HANDBOOK_LONG_SENTENCES)
    assert all(p.text.endswith("entry.") for p in second)  # cut between sentences, never inside one
    lengths = [len(p.text) for p in second]
    assert max(lengths) - min(lengths) < 400  # about equal parts, not full ones and a stub


def test_units_trace_to_paragraph_passages_with_their_page() -> None:
    corpus = load_corpus(HANDBOOK)
    doc = corpus.documents[0]
    units = sentence_units(corpus, min_tokens=1)
    assert units
    for unit in units:
        for source in unit.sources:
            passage = corpus.passage(source.passage_id)
            assert passage.start <= source.start < source.end <= passage.end
            assert " ".join(doc.text[source.start:source.end].split()) == unit.text
            assert passage.page in (1, 2)


def test_line_rules_without_positions() -> None:
    """Without positions (an older pypdf) blank lines, short sentence-ending lines and list items still
    split; a word hyphenated at the line end is rejoined; Chinese lines join without a space."""
    lines = [Line(t) for t in ("The valve is closed before the pump is start-", "ed and the pressure is set to",
                               "three bar for normal operation of the unit.", "Then open it.",
                               "The next paragraph starts here and runs on", "to a second line.", "",
                               "1. First step", "2. Second step")]
    assert paragraphs(lines) == [
        "The valve is closed before the pump is started and the pressure is set to three bar for normal "
        "operation of the unit. Then open it.",
        "The next paragraph starts here and runs on to a second line.", "1. First step", "2. Second step"]
    assert paragraphs([Line("学而时习之，"), Line("不亦说乎。")]) == ["学而时习之，不亦说乎。"]


def test_line_rules_with_positions() -> None:
    """A gap wider than the page's line spacing, a change of font size, or a line above the previous one
    (a second column) starts a paragraph; ordinary spacing does not."""
    lines = [Line("Heading", 800, 16), Line("Body line one of a paragraph that", 770, 11),
             Line("goes on here", 756, 11), Line("New paragraph after a gap", 730, 11), Line("and more", 716, 11),
             Line("Second column", 790, 11)]
    assert paragraphs(lines) == ["Heading", "Body line one of a paragraph that goes on here",
                                 "New paragraph after a gap and more", "Second column"]


def test_only_paged_documents_are_capped(tmp_path: Path) -> None:
    """Plain text keeps an author's long paragraph whole (its cache keys are unchanged); the cap is for
    pages."""
    long = " ".join(f"Sentence number {n} of a long paragraph says something." for n in range(60))
    (tmp_path / "long.txt").write_text(long, encoding="utf-8")
    assert [p.text for p in load_corpus(tmp_path / "long.txt").passages] == [long]
    capped = make_document("d", long, max_chars=500).passages
    assert len(capped) > 1 and all(len(p.text) <= 500 for p in capped)


def test_review_rows_of_a_pdf_run_show_paragraphs_with_pages(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", str(HANDBOOK), "--simulate", "--max-rounds", "1", "--out", str(run_dir), "--quiet"]) == 0
    rows = review_rows(load_run(run_dir))
    assert rows
    for row in rows:
        for source in row.sources:
            assert source.page in (1, 2)
            assert source.passage_text and len(source.passage_text) <= MAX_PAGED_PASSAGE_CHARS
            assert source.span_text in source.passage_text or " ".join(source.span_text.split()) in source.passage_text
