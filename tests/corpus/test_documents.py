"""PDF, Word and PowerPoint corpora: every passage and unit source keeps its page (slide), spans index
the document text examiner builds, scanned PDFs are skipped with the reason, and a missing extra is one
line naming the install command. Fixtures: tests/fixtures/documents (built by make_documents.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.corpus.reading import load_corpus, passage_rows
from examiner.corpus.documents import INSTALL_HINT
from examiner.core.errors import UserError
from examiner.corpus.units import sentence_units

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4}
PAGE_NAME = re.compile(r"page (one|two|three|four)")


def _pages_of_units(document: str) -> dict[int, list[str]]:
    """Page -> unit texts for the units drawn from one fixture, checking every span on the way."""
    corpus = load_corpus(FIXTURES / document)
    doc = corpus.documents[0]
    pages: dict[int, list[str]] = {}
    for unit in sentence_units(corpus, min_tokens=1):
        for source in unit.sources:
            passage = corpus.passage(source.passage_id)
            assert " ".join(doc.text[source.start:source.end].split()) == unit.text
            assert passage.start <= source.start < source.end <= passage.end
            assert passage.page is not None
            pages.setdefault(passage.page, []).append(unit.text)
    return pages


def test_pdf_units_carry_their_page_numbers() -> None:
    pages = _pages_of_units("manual.pdf")
    assert sorted(pages) == [1, 3, 4]  # page 2 holds a figure only
    for page, texts in pages.items():
        named = {NUMBERS[m] for t in texts for m in PAGE_NAME.findall(t)}
        assert named == {page}
    assert any("3 bar" in t for t in pages[1]) and any("five years" in t for t in pages[4])


def test_docx_units_carry_their_page_numbers() -> None:
    pages = _pages_of_units("notes.docx")
    assert sorted(pages) == [1, 2, 3]
    for page, texts in pages.items():
        assert {NUMBERS[m] for t in texts for m in PAGE_NAME.findall(t)} == {page}
    assert any("North pier | 340 metres" in t for t in pages[3])  # the table follows the last break


def test_pptx_slides_are_pages() -> None:
    pages = _pages_of_units("deck.pptx")
    assert sorted(pages) == [1, 2]
    assert any("eight percent" in t for t in pages[1]) and any("Leeds" in t for t in pages[2])


def test_scanned_pdf_is_skipped_with_the_reason() -> None:
    corpus = load_corpus(FIXTURES)
    assert [Path(s.path).name for s in corpus.skipped] == ["scanned.pdf"]
    assert "no text layer" in corpus.skipped[0].reason
    assert {Path(d.path).name for d in corpus.documents} == {"manual.pdf", "notes.docx", "deck.pptx"}
    rows = list(passage_rows(corpus))
    assert all(isinstance(r["page"], int) and r["page"] >= 1 for r in rows)
    assert {r["language"] for r in rows} == {"en"}
    with pytest.raises(UserError, match="no passage"):
        load_corpus(FIXTURES / "scanned.pdf")


@pytest.mark.parametrize("module, document", [("pypdf", "manual.pdf"), ("docx", "notes.docx"),
                                              ("pptx", "deck.pptx")])
def test_missing_extra_is_one_line_naming_the_install(monkeypatch: pytest.MonkeyPatch, module: str,
                                                      document: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    with pytest.raises(UserError) as info:
        load_corpus(FIXTURES / document)
    assert INSTALL_HINT in str(info.value) and "\n" not in str(info.value)


def test_exam_on_documents_records_pages_and_the_skipped_scan(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", str(FIXTURES), "--simulate", "--max-rounds", "1", "--out", str(run_dir), "--quiet"]) == 0
    passages = [json.loads(line) for line in (run_dir / "passages.jsonl").read_text().splitlines()]
    by_doc = {}
    for row in passages:
        by_doc.setdefault(row["document"].split("/")[-1], set()).add(row["page"])
    assert by_doc == {"manual.pdf": {1, 3, 4}, "notes.docx": {1, 2, 3}, "deck.pptx": {1, 2}}
    info = json.loads((run_dir / "run.json").read_text())
    assert [Path(s["path"]).name for s in info["skipped_files"]] == ["scanned.pdf"]
    assert info["language"] == "en"
    report = (run_dir / "report.md").read_text()
    assert "Accuracy per language" not in report  # one language, English: no language section


def test_docx_pages_follow_word_rendered_breaks(tmp_path: Path) -> None:
    """A file saved by Word marks where it broke pages (lastRenderedPageBreak); one right after an
    explicit page break is the same break, not another page."""
    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_paragraph("First page text.")
    second = document.add_paragraph("Second page text.")
    second.runs[0]._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    document.add_page_break()
    third = document.add_paragraph("Third page text.")
    third.runs[0]._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    path = tmp_path / "word.docx"
    document.save(str(path))
    passages = load_corpus(path).documents[0].passages
    assert [(p.text, p.page) for p in passages] == [("First page text.", 1), ("Second page text.", 2),
                                                     ("Third page text.", 3)]


def test_export_rows_carry_the_page(tmp_path: Path) -> None:
    """`examiner export` puts each unit's page (here PDF pages) in its row and its sources."""
    run = tmp_path / "run"
    assert main(["run", str(FIXTURES / "manual.pdf"), "--simulate", "--max-rounds", "1", "--quiet",
                 "--out", str(run)]) == 0
    out = tmp_path / "export"
    assert main(["export", str(run), "--to", "jsonl", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["page"] in (1, 3, 4) for r in rows)
    assert all(s["page"] in (1, 3, 4) for r in rows for s in r["sources"])
