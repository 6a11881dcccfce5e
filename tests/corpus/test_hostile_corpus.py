"""Corpus files written to hurt the reader: links out of the corpus, special files, decompression bombs,
entity bombs, damaged archives, deep nesting, pathological HTML and foreign encodings.

Each test reproduces one finding of issue 25. What must hold for every one: the run goes on, the file is
skipped with a reason in `Corpus.skipped` (so in run.json and the report) and one warning line, and no
traceback reaches the user. tests/helpers/hostile_files.py builds the hostile files.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.corpus.reading import html_to_text, load_corpus
from examiner.corpus.datasets import read_records
from examiner.corpus.documents import ReadLimits
from examiner.core.errors import UserError
from tests.helpers.hostile_files import (BILLION_LAUGHS, FIXTURES, TEXT, bad_crc, bomb_docx, bomb_pdf, docx_with_body,
                                         nested_json, text_pdf, with_members)

SECRET = "root:$6$secret-hash-that-must-never-leave-this-machine:19000:0:99999:7:::"


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def _folder(tmp_path: Path, name: str, data: bytes | str) -> Path:
    """A corpus folder with one good file and the hostile `name`."""
    folder = tmp_path / "corpus"
    _write(folder / "good.txt", TEXT)
    _write(folder / name, data)
    return folder


def _skipped(corpus_or_folder: object, name: str) -> str:
    """The skip reason recorded for the file called `name`."""
    corpus = corpus_or_folder
    reasons = [s.reason for s in corpus.skipped if Path(s.path.split(":")[0]).name == name]  # type: ignore[attr-defined]
    assert len(reasons) == 1, corpus.skipped  # type: ignore[attr-defined]
    return reasons[0]


def _warnings(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and name in r.getMessage()]


# --- links and special files --------------------------------------------------------------------------

def test_a_link_out_of_the_corpus_is_not_followed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    secret = _write(tmp_path / "elsewhere" / "shadow", SECRET)
    folder = _folder(tmp_path, "good.md", TEXT)
    (folder / "etc.txt").symlink_to(secret)
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus([folder])
    assert all("secret" not in d.text for d in corpus.documents)
    reason = _skipped(corpus, "etc.txt")
    assert f"symbolic link to {secret}" in reason and "outside the corpus" in reason and "--follow-links" in reason
    assert len(_warnings(caplog, "etc.txt")) == 1
    followed = load_corpus([folder], limits=ReadLimits(follow_links=True))
    assert any(SECRET in d.text for d in followed.documents)


def test_links_inside_the_corpus_are_read_and_loops_skipped(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "sub/real.md", "A sentence inside the corpus, reached through a link.")
    (folder / "alias.md").symlink_to(folder / "sub" / "real.md")
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "broken.txt").symlink_to(folder / "missing.txt")
    (folder / "sub" / "up").symlink_to(folder)  # a folder link back to the root
    corpus = load_corpus([folder], limits=ReadLimits(follow_links=True))
    assert sorted(d.id.split("/", 1)[1] for d in corpus.documents) == ["alias.md", "good.txt", "sub/real.md"]
    assert "loop" in _skipped(corpus, "loop.txt")
    assert "broken symbolic link" in _skipped(corpus, "broken.txt")
    assert "loop" in _skipped(corpus, "up")


@pytest.mark.timeout(20)
def test_a_fifo_is_skipped_not_waited_on(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "good.md", TEXT)
    os.mkfifo(folder / "pipe.txt")
    corpus = load_corpus([folder])
    assert "not a regular file" in _skipped(corpus, "pipe.txt")


def test_unsupported_files_are_listed_with_the_reason(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "guide.rst", "A reStructuredText guide.\n=====\n")
    corpus = load_corpus([folder])
    assert "unsupported file type .rst" in _skipped(corpus, "guide.rst")


def test_the_run_lists_the_link_and_sends_nothing_of_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    secret = _write(tmp_path / "elsewhere" / "shadow", SECRET)
    folder = tmp_path / "corpus"
    folder.mkdir()
    source = sorted(Path("corpora/examiner-handbook").glob("0*.md"))[0]
    shutil.copy(source, folder / source.name)
    (folder / "etc.txt").symlink_to(secret)
    _write(folder / "notes.rst", "Unsupported.")
    out = tmp_path / "run"
    with caplog.at_level(logging.WARNING):
        assert main(["run", str(folder), "--simulate", "--max-rounds", "1", "--quiet", "--out", str(out)]) == 0
    for name in ("passages.jsonl", "units.jsonl", "report.md", "ledger.jsonl", "questions.jsonl"):
        if (out / name).exists():
            assert "secret-hash" not in (out / name).read_text(encoding="utf-8"), name
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    reasons = {Path(s["path"]).name: s["reason"] for s in info["skipped_files"]}
    assert "outside the corpus" in reasons["etc.txt"] and "unsupported" in reasons["notes.rst"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "etc.txt" in report and "notes.rst" in report
    assert len(_warnings(caplog, "etc.txt")) == 1


def test_reading_flags_configure_the_reader_and_are_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              ) -> None:
    from examiner.cli.main import build_parser
    from examiner.api.exam import prepare_exam
    from examiner.cli.commands.exam import exam_options
    from examiner.corpus.documents import DEFAULT_LIMITS, configure_reading, reading_limits

    folder = _folder(tmp_path, "good.md", TEXT)
    args = build_parser().parse_args(["run", str(folder), "--simulate", "--follow-links", "--max-document-mb", "5",
                                      "--max-document-pages", "7", "--max-nesting-depth", "20"])
    try:
        _, settings = prepare_exam(exam_options(args), args.config)
        assert reading_limits() == ReadLimits(follow_links=True, max_document_mb=5, max_document_pages=7,
                                              max_nesting_depth=20)
        assert settings.exam.follow_links and settings.exam.max_document_pages == 7  # kept for resume
    finally:
        configure_reading(DEFAULT_LIMITS)
    code = main(["run", str(folder), "--simulate", "--max-document-pages", "0", "--out", str(tmp_path / "never")])
    err = capsys.readouterr().err
    assert code == 2 and "--max-document-pages 0" in err and "Traceback" not in err
    assert not (tmp_path / "never").exists()


# --- documents past a limit ----------------------------------------------------------------------------

def test_a_pdf_inflating_to_200_mb_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = _folder(tmp_path, "bomb.pdf", bomb_pdf(200))
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus([folder])
    assert "limit" in _skipped(corpus, "bomb.pdf")
    assert [d.id for d in corpus.documents] == ["corpus/good.txt"]
    assert len(_warnings(caplog, "bomb.pdf")) == 1


def test_a_docx_zip_bomb_is_skipped_before_it_is_inflated(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "bomb.docx", bomb_docx(8))
    corpus = load_corpus([folder], limits=ReadLimits(max_document_mb=2))
    assert "decompresses to more than 2 MB" in _skipped(corpus, "bomb.docx")
    assert load_corpus([folder / "bomb.docx"]).documents  # under the default limit it reads


@pytest.mark.parametrize("name, data, words", [
    ("malformed.docx", lambda: docx_with_body(b"<w:document><w:body><w:p>"), "XML"),
    ("laughs.docx", lambda: docx_with_body(BILLION_LAUGHS), "entity"),
    ("crc.docx", lambda: bad_crc(FIXTURES / "notes.docx", "word/document.xml"), "CRC"),
    ("types-only.pptx", lambda: with_members(FIXTURES / "deck.pptx", {}, keep=("[Content_Types].xml",)), "PowerPoint"),
    ("bad-types.pptx", lambda: with_members(FIXTURES / "deck.pptx", {"[Content_Types].xml": b"<Types"},
                                            keep=("[Content_Types].xml",)), "PowerPoint"),
    ("crc.pptx", lambda: bad_crc(FIXTURES / "deck.pptx", "ppt/slides/slide1.xml"), "CRC"),
    ("not-a-zip.docx", lambda: b"PK\x03\x04 not really a zip", "zip"),
    ("truncated.pdf", lambda: text_pdf()[:150], "PDF"),
])
def test_damaged_office_files_are_skipped_with_a_reason(tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str,
                                                         data, words: str) -> None:
    folder = _folder(tmp_path, name, data())
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus([folder])
    assert words.lower() in _skipped(corpus, name).lower()
    assert [d.id for d in corpus.documents] == ["corpus/good.txt"]
    assert len(_warnings(caplog, name)) == 1


def test_page_time_and_text_limits(tmp_path: Path) -> None:
    good, manual = _write(tmp_path / "good.txt", TEXT), FIXTURES / "manual.pdf"
    pages = load_corpus([good, manual], limits=ReadLimits(max_document_pages=2))
    assert "4 pages, above the limit of 2" in _skipped(pages, "manual.pdf")
    slow = load_corpus([good, manual], limits=ReadLimits(max_document_seconds=0))
    assert "second" in _skipped(slow, "manual.pdf")
    big = _write(tmp_path / "big.txt", "word " * 300_000)
    assert "above the limit" in _skipped(load_corpus([good, big], limits=ReadLimits(max_document_text_mb=1)), "big.txt")


# --- nesting, HTML, encodings, control characters ------------------------------------------------------

def test_a_jsonl_record_nested_200000_deep_is_skipped(tmp_path: Path) -> None:
    data = _write(tmp_path / "deep.jsonl", json.dumps({"text": TEXT}) + "\n" + nested_json(200_000) + "\n")
    corpus = load_corpus([data])
    assert [p.text for p in corpus.passages] == [TEXT]
    assert [s.path for s in corpus.skipped] == [f"{data}:2"] and "nested" in corpus.skipped[0].reason
    records = read_records(str(data))
    assert records[0].data == {"text": TEXT} and "nested" in records[1].broken
    array = _write(tmp_path / "deep.json", "[" + nested_json(200_000) + "]")
    with pytest.raises(UserError, match="nested"):
        read_records(str(array))


def test_judge_on_a_deeply_nested_dataset_is_no_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write(tmp_path / "pairs.jsonl", nested_json(200_000) + "\n")
    code = main(["judge", str(data), "--method", "pairwise", "--simulate", "--out", str(tmp_path / "j")])
    assert code in (0, 2)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_html_of_100000_nested_divs_reads_in_seconds(tmp_path: Path) -> None:
    html = "<div>" * 100_000 + "Deep text at the bottom." + "</div>" * 100_000
    started = time.monotonic()
    assert html_to_text(html) == "Deep text at the bottom."
    assert time.monotonic() - started < 5
    started = time.monotonic()
    corpus = load_corpus([_write(tmp_path / "deep.html", html)])
    assert [p.text for p in corpus.passages] == ["Deep text at the bottom."]
    assert time.monotonic() - started < 10


def test_latin1_text_full_of_accents_is_read_not_refused(tmp_path: Path) -> None:
    text = ("Élève à l'école, où naïveté et café crème côtoient l'été français; "
            "ça déçoit rarement les élèves âgés. ") * 20
    f = _write(tmp_path / "latin.txt", text.encode("latin-1"))
    corpus = load_corpus([f])
    assert corpus.skipped == []
    assert corpus.documents[0].text == text
    assert corpus.decoded_with_replacement == [str(f)]  # listed as not UTF-8


def test_control_characters_never_reach_the_document_text(tmp_path: Path) -> None:
    rows = [{"text": "Null\u0000 byte and bell\u0007 inside."}, {"text": "Lone surrogate \ud800 here."}]
    data = _write(tmp_path / "ctl.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    corpus = load_corpus([data])
    texts = [d.text for d in corpus.documents]
    assert texts == ["Null byte and bell inside.", "Lone surrogate \ufffd here."]
    for text in texts:
        text.encode("utf-8")
