"""Corpus loading: provenance spans, supported formats, and an honest account of bad inputs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from examiner.corpus.reading import corpus_from_texts, html_to_text, load_corpus, split_passages
from examiner.core.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_spans_slice_back_to_passage_text(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "  First paragraph,\nwrapped.\n\n\n   Second one.  \n \nThird.\n")
    _write(tmp_path / "sub" / "b.md", "# Title\n\nBody text here.")
    corpus = load_corpus([tmp_path])
    assert [d.id for d in corpus.documents] == [f"{tmp_path.name}/a.txt", f"{tmp_path.name}/sub/b.md"]
    texts = [p.text for p in corpus.passages]
    assert texts == ["First paragraph,\nwrapped.", "Second one.", "Third.", "# Title", "Body text here."]
    for doc in corpus.documents:
        for p in doc.passages:
            assert doc.text[p.start:p.end] == p.text
            assert p.document == doc.id
            assert corpus.passage(p.id) is p


def test_passage_ids_are_stable_and_location_independent(tmp_path: Path) -> None:
    for where in ("one", "two"):
        _write(tmp_path / where / "docs" / "a.txt", "Alpha.\n\nBeta.\n\nAlpha.")
    ids_one = [p.id for p in load_corpus([tmp_path / "one" / "docs"]).passages]
    ids_two = [p.id for p in load_corpus([tmp_path / "two" / "docs"]).passages]
    assert ids_one == ids_two
    assert len(set(ids_one)) == 3  # the repeated paragraph still gets its own id


def test_relative_dot_path_gets_folder_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "a.txt", "Text.")
    monkeypatch.chdir(tmp_path)
    assert [d.id for d in load_corpus(["."]).documents] == [f"{tmp_path.name}/a.txt"]


def test_jsonl_records_become_documents(tmp_path: Path) -> None:
    lines = [json.dumps({"id": "r1", "body": "One.\n\nTwo."}), "not json", json.dumps({"other": 1}),
             json.dumps({"body": "Three."})]
    f = _write(tmp_path / "data.jsonl", "\n".join(lines) + "\n")
    corpus = load_corpus([f], jsonl_field="body")
    assert [d.id for d in corpus.documents] == ["data.jsonl#r1", "data.jsonl#L4"]
    assert [p.text for p in corpus.passages] == ["One.", "Two.", "Three."]
    assert [s.path for s in corpus.skipped] == [f"{f}:2", f"{f}:3"]


def test_html_text_without_scripts_and_styles(tmp_path: Path) -> None:
    html = ("<html><head><title>Page</title><style>p {color: red}</style></head><body>"
            "<h1>Heading</h1><p>Some <b>bold</b> words.<script>alert('x')</script></p>"
            "<ul><li>first</li><li>second</li></ul><!-- hidden --></body></html>")
    text = html_to_text(html)
    assert "alert" not in text and "color" not in text and "hidden" not in text
    assert text.split("\n\n") == ["Page", "Heading", "Some bold words.", "first", "second"]
    f = _write(tmp_path / "p.html", html)
    assert [p.text for p in load_corpus([f]).passages][2] == "Some bold words."


def test_binary_file_skipped_and_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _write(tmp_path / "good.txt", "Real text.")
    _write(tmp_path / "blob.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    _write(tmp_path / "noise.md", bytes(range(128, 256)) * 4 + bytes(range(1, 9)) * 40)
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus([tmp_path])
    assert [p.text for p in corpus.passages] == ["Real text."]
    skipped = {Path(s.path).name: s.reason for s in corpus.skipped}
    assert set(skipped) == {"blob.txt", "noise.md"}
    assert all("binary" in r for r in skipped.values())
    assert "blob.txt" in caplog.text


def test_non_utf8_decoded_in_its_detected_encoding_and_counted(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    f = _write(tmp_path / "latin.txt", "Caf\xe9 cr\xe8me is served daily.".encode("latin-1"))
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus([f])
    assert corpus.decoded_with_replacement == [str(f)]
    assert corpus.passages[0].text == "Caf\xe9 cr\xe8me is served daily."
    assert corpus.skipped == []
    assert "not valid UTF-8: read as cp1252" in caplog.text


@pytest.mark.parametrize("text, encoding", [("\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430? " * 5, "cp1251"),
                                            ("Pchn\u0105\u0107 w t\u0119 \u0142\xf3d\u017a je\u017ca lub o\u015bm skrzy\u0144 fig. Dzie\u0144 dobry, jak si\u0119 masz? "
                                             * 3, "cp1250"),
                                            ("Plain text written in UTF-16. " * 3, "utf-16-le")])
def test_other_encodings_are_detected(tmp_path: Path, text: str, encoding: str) -> None:
    f = _write(tmp_path / "t.txt", text.encode(encoding))
    assert load_corpus([f]).documents[0].text == text


def test_utf8_bom_and_crlf(tmp_path: Path) -> None:
    f = _write(tmp_path / "bom.txt", "\ufeffLine one.\r\n\r\nLine two.\r\n".encode())
    assert [p.text for p in load_corpus([f]).passages] == ["Line one.", "Line two."]


def test_unsupported_files_ignored_in_folders_metadata_left_out(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "Kept.")
    _write(tmp_path / "SOURCE.md", "About the corpus.")
    _write(tmp_path / "image.png", b"\x89PNG")
    _write(tmp_path / ".hidden.txt", "Hidden.")
    corpus = load_corpus([tmp_path])
    assert [p.text for p in corpus.passages] == ["Kept."]
    assert [Path(p).name for p in corpus.ignored] == ["image.png"]
    assert [(Path(s.path).name, s.reason.split(";")[0]) for s in corpus.skipped] == [
        ("image.png", "unsupported file type .png")]


def test_missing_path_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_corpus([tmp_path / "nope"])


def test_empty_corpus_is_a_user_error(tmp_path: Path) -> None:
    _write(tmp_path / "empty.txt", "   \n\n  \n")
    with pytest.raises(UserError, match="empty"):
        load_corpus([tmp_path])
    with pytest.raises(UserError, match="empty"):
        load_corpus([tmp_path / "empty.txt"])
    with pytest.raises(UserError):
        corpus_from_texts([("x", "")])


def test_split_passages_offsets() -> None:
    text = "\n\nA b.\n   \nC d.\n\n"
    assert [(p.start, p.end, p.text) for p in split_passages("d", text)] == [(2, 6, "A b."), (11, 15, "C d.")]


@pytest.mark.parametrize("name", ["examiner-handbook", "harbor-water", "lunyu-xueer"])
def test_sample_corpora_load_cleanly(name: str) -> None:
    corpus = load_corpus([REPO / "corpora" / name])
    assert corpus.documents and not corpus.skipped and not corpus.decoded_with_replacement
    assert all("SOURCE.md" not in d.id for d in corpus.documents)


def test_a_skipped_file_is_warned_about_once_per_process(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The exam and its reports read a corpus several times; the user hears about a skipped file once,
    while every read still lists it as skipped."""
    (tmp_path / "note.md").write_text("A sentence that is long enough to become a knowledge unit.", encoding="utf-8")
    (tmp_path / "blob.txt").write_bytes(b"\x00\x01binary\x00" * 50)
    with caplog.at_level(logging.WARNING, logger="examiner.corpus.reading"):
        first, second = load_corpus([tmp_path]), load_corpus([tmp_path])
    assert [s.path for s in first.skipped] == [s.path for s in second.skipped] == [str(tmp_path / "blob.txt")]
    assert sum("blob.txt" in r.getMessage() for r in caplog.records) == 1
