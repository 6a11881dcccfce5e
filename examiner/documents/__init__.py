"""Readers for office documents: PDF, Word (.docx) and PowerPoint (.pptx) files as numbered pages.

Each reader returns the file's text page by page (slide by slide for .pptx), paragraphs separated by blank
lines. The corpus joins the pages with blank lines into the document's text, so a passage never spans two
pages and every passage knows its page. The libraries come with the optional `documents` extra; without
it, reading such a file stops with one line saying how to install it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from examiner.errors import UserError

INSTALL_HINT = "pip install 'examiner[documents]'"


@dataclass(frozen=True)
class Page:
    """The text of one page (PDF, DOCX) or slide (PPTX); `number` counts from 1."""

    number: int
    text: str


class Unreadable(Exception):
    """The file is a document of this type but yields no text; the message says why (for the skip list)."""


def missing_extra(library: str, suffix: str) -> UserError:
    """The one-line error for a document type whose library is not installed."""
    return UserError(f"reading {suffix} files needs the {library} package: {INSTALL_HINT}")


def _read_pdf(path: Path) -> list[Page]:
    from examiner.documents.pdf import read_pdf
    return read_pdf(path)


def _read_docx(path: Path) -> list[Page]:
    from examiner.documents.word import read_docx
    return read_docx(path)


def _read_pptx(path: Path) -> list[Page]:
    from examiner.documents.slides import read_pptx
    return read_pptx(path)


READERS: dict[str, Callable[[Path], list[Page]]] = {".pdf": _read_pdf, ".docx": _read_docx, ".pptx": _read_pptx}
"""Reader per file suffix (lower case)."""

PAGE_MEANING = {".pdf": "page", ".docx": "page", ".pptx": "slide"}
"""What a passage's `page` counts for each document type (README, "Supported formats")."""
