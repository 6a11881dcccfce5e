"""Large inputs (issue 9, deliverable 5): a corpus of a few MB goes through the prepare stage with progress
and the same units as the plain in-memory call, and a corpus above `exam.max_corpus_mb` is refused up
front in one line, before any run directory exists."""

from __future__ import annotations

import asyncio
import io
import re
import types
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from examiner.core.config import Settings
from examiner.corpus.reading import check_corpus_size, corpus_bytes, corpus_from_texts, load_corpus
from examiner.core.errors import UserError
from examiner.exam import bookends
from examiner.exam.progress import ExamProgress
from examiner.corpus.units import Source, make_unit, merge_near_duplicates, sentence_units
from examiner.llm.gateway import Totals
from tests.helpers.cli_runs import assert_one_error, run_cli
from tests.helpers.datasets import FIXTURE_DATA

WIKITEXT = FIXTURE_DATA / "wikitext2" / "valid.txt"
"""Invented articles in WikiText's tokenised form (sentences end in " . "), copied up to the size wanted."""


@pytest.fixture(scope="module")
def big_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 3 MB: copies of the WikiText-shaped fixture, numbered sentence by sentence so no two copies
    share a unit."""
    source = WIKITEXT.read_text(encoding="utf-8")
    path = tmp_path_factory.mktemp("large") / "big.txt"
    with open(path, "w", encoding="utf-8") as fh:
        copy, size = 0, 0
        while size < 3_000_000:
            copy += 1
            size += fh.write(source.replace(" . ", f" . ({copy}) "))
    return path


def recording_progress() -> tuple[ExamProgress, Console]:
    """A progress display writing its stage lines to a string instead of the terminal."""
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    return ExamProgress(Totals(), enabled=True, console=console), console


def test_a_few_mb_make_the_same_sentence_units_with_a_progress_bar(big_text: Path) -> None:
    corpus = load_corpus(big_text)
    progress, console = recording_progress()
    ctx = types.SimpleNamespace(progress=progress, exam=Settings().exam)
    streamed = bookends._sentence_units(ctx, corpus)  # noqa: SLF001 - the prepare node's own step
    assert streamed == sentence_units(corpus)
    assert len(streamed) > 10_000  # the copies did not collapse into one another
    passages = len(corpus.passages)
    assert re.search(rf"sentence units .* {passages} done", console.file.getvalue())


def test_embedding_in_chunks_gives_the_vectors_of_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    class Embedder:
        calls: list[int] = []

        def embed(self, texts: list[str]) -> np.ndarray:
            self.calls.append(len(texts))
            return np.array([[len(t), sum(map(ord, t)) % 97, 1.0] for t in texts], dtype=np.float32)

    texts = [f"unit number {i} of the corpus" for i in range(25)]
    progress, console = recording_progress()
    ctx = types.SimpleNamespace(progress=progress, embedder=Embedder())
    whole = asyncio.run(bookends._embed(ctx, texts))  # noqa: SLF001
    monkeypatch.setattr(bookends, "EMBED_CHUNK", 10)
    chunked = asyncio.run(bookends._embed(ctx, texts))  # noqa: SLF001
    assert ctx.embedder.calls == [25, 10, 10, 5]
    assert np.array_equal(whole, chunked)
    assert "embed units" in console.file.getvalue()


def test_a_repeated_line_is_one_unit_with_each_source_once() -> None:
    text = "\n\n".join(["The same boilerplate sentence is repeated on every page of the file."] * 2000)
    corpus = corpus_from_texts([("page", text)])
    (unit,) = sentence_units(corpus)
    assert len(unit.sources) == 2000 == len(set(unit.sources))
    assert [s.start for s in unit.sources] == sorted(s.start for s in unit.sources)
    twin = make_unit(unit.text, [*unit.sources[:5], Source(document="other", passage_id="p", start=0, end=1)])
    merged = merge_near_duplicates([unit, twin], np.ones((2, 3), dtype=np.float32))
    assert len(merged) == 1 and len(merged[0].sources) == 2001


def test_corpus_bytes_counts_the_files_a_load_reads(big_text: Path, corpus: Path) -> None:
    size = big_text.stat().st_size
    assert corpus_bytes([big_text]) == size
    assert corpus_bytes([big_text.parent]) == size
    assert corpus_bytes([corpus]) == sum(p.stat().st_size for p in corpus.iterdir())
    check_corpus_size([big_text], size / 1e6)  # at the limit: accepted
    with pytest.raises(UserError, match=r"above the limit of 1 MB \(exam.max_corpus_mb\).*--max-corpus-mb"):
        check_corpus_size([big_text], 1)


@pytest.mark.parametrize("command", ["run", "estimate"])
def test_a_corpus_above_the_limit_is_one_line_and_creates_nothing(command: str, big_text: Path, config_file: Path,
                                                                  tmp_path: Path, capsys, caplog) -> None:
    out = tmp_path / "exam"
    args = [command, str(big_text), "--max-corpus-mb", "2"]
    extra = ["--config", str(config_file), "--quiet", "--out", str(out)] if command == "run" else ["--simulate"]
    code, lines, _ = run_cli(args + extra, capsys, caplog)
    assert_one_error(code, lines, "the corpus is 3.", "above the limit of 2 MB", "--max-corpus-mb")
    assert not out.exists()


def test_the_limit_is_a_setting_run_and_resume_validate_alike(corpus: Path, config_file: Path, tmp_path: Path,
                                                              capsys, caplog) -> None:
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out",
                              str(tmp_path / "never"), "--max-corpus-mb", "0"], capsys, caplog)
    assert_one_error(code, lines, "--max-corpus-mb 0")
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out",
                              str(tmp_path / "exam"), "--max-corpus-mb", "0.5"], capsys, caplog)
    assert code == 0, lines
