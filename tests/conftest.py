"""Fixtures shared by several test modules."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first two documents of the examiner handbook corpus, copied to a folder of their own."""
    folder = tmp_path_factory.mktemp("small")
    for source in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:2]:
        (folder / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return folder
