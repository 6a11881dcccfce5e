"""Readers for office documents: PDF, Word (.docx) and PowerPoint (.pptx) files as numbered pages.

Each reader returns the file's text page by page (slide by slide for .pptx), paragraphs separated by blank
lines. The corpus joins the pages with blank lines into the document's text, so a passage never spans two
pages and every passage knows its page. The libraries come with the optional `documents` extra; without
it, reading such a file stops with one line saying how to install it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from examiner.core.errors import UserError

INSTALL_HINT = "pip install 'examiner[documents]'"


@dataclass(frozen=True)
class Page:
    """The text of one page (PDF, DOCX) or slide (PPTX); `number` counts from 1."""

    number: int
    text: str


class Unreadable(Exception):
    """The file is a document of this type but yields no text; the message says why (for the skip list)."""


class LimitReached(Unreadable):
    """Reading the file would go past one of the reading limits; the message names the limit and its flag."""


@dataclass(frozen=True)
class ReadLimits:
    """How far the corpus reader goes with one file (docs/CORPORA-LIMITS.md). A file past a limit is skipped
    with the reason, never read in part: a hostile or broken file costs a warning, not the run."""

    follow_links: bool = False
    """Read symbolic links that point outside the corpus folder (links inside it are always read)."""
    max_document_mb: float = 100.0
    """Bytes (in MB, 10^6) a document may decompress to (an Office file's zip members together, any one PDF
    stream) and the largest plain file (.txt .md .html .jsonl) read."""
    max_document_text_mb: float = 50.0
    """Extracted text of one document, in MB of characters."""
    max_document_pages: int = 2000
    """Pages of a PDF or Word file, slides of a deck."""
    max_document_seconds: float = 60.0
    """Time spent reading one file, checked between pages, slides, records and parts."""
    max_nesting_depth: int = 100
    """Nesting of JSON arrays and objects in a JSONL record or a JSON dataset."""

    @property
    def max_bytes(self) -> int:
        return int(self.max_document_mb * 1e6)

    @property
    def max_chars(self) -> int:
        return int(self.max_document_text_mb * 1e6)

    def deadline(self) -> Deadline:
        return Deadline(self.max_document_seconds)

    def too_many_pages(self, count: int, what: str = "pages") -> LimitReached | None:
        """The error for a document of `count` pages (slides) when that is above the limit, else None."""
        if count <= self.max_document_pages:
            return None
        return LimitReached(f"{count} {what}, above the limit of {self.max_document_pages} (--max-document-pages)")

    def text_too_long(self, chars: int) -> LimitReached | None:
        """The error for `chars` characters of extracted text when that is above the limit, else None."""
        if chars <= self.max_chars:
            return None
        return LimitReached(f"more than {self.max_document_text_mb:g} MB of text, above the limit "
                            f"(--max-document-text-mb)")


class Deadline:
    """The time one file may take, checked at the reader's natural steps (a page, a slide, a record): a
    single step is not interrupted, so the limit bounds the steps, not the wall time of a pathological one."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def check(self) -> None:
        """Raise LimitReached once the time is up."""
        if time.monotonic() >= self.end:
            raise LimitReached(f"reading took more than {self.seconds:g} second(s), the limit "
                               f"(--max-document-seconds)")


DEFAULT_LIMITS = ReadLimits()

_configured: list[ReadLimits] = [DEFAULT_LIMITS]


def reading_limits() -> ReadLimits:
    """The limits a read without explicit limits uses: the defaults, or what the command configured."""
    return _configured[0]


def configure_reading(limits: ReadLimits) -> None:
    """Make `limits` this process's reading limits (the command sets them from its settings and flags, so
    every reader of the corpus in the process, reports included, reads alike)."""
    _configured[0] = limits


def missing_extra(library: str, suffix: str) -> UserError:
    """The one-line error for a document type whose library is not installed."""
    return UserError(f"reading {suffix} files needs the {library} package: {INSTALL_HINT}")


def _read_pdf(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> list[Page]:
    from examiner.corpus.documents.pdf import read_pdf
    return read_pdf(path, limits)


def _read_docx(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> list[Page]:
    from examiner.corpus.documents.word import read_docx
    return read_docx(path, limits)


def _read_pptx(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> list[Page]:
    from examiner.corpus.documents.slides import read_pptx
    return read_pptx(path, limits)


def failure(kind: str, exc: BaseException) -> Unreadable:
    """The skip reason for a file its library could not parse: the kind of file, the error's type and the
    first line of its message (a damaged file raises whatever the parser met first)."""
    message = str(exc).splitlines()[0][:160] if str(exc).strip() else ""
    return Unreadable(f"unreadable {kind} ({type(exc).__name__}{': ' + message if message else ''})")


READERS: dict[str, Callable[[Path, ReadLimits], list[Page]]] = {".pdf": _read_pdf, ".docx": _read_docx, ".pptx": _read_pptx}
"""Reader per file suffix (lower case)."""

TEXT_SUFFIXES = (".txt", ".md", ".jsonl", ".html", ".htm")
"""File types examiner.corpus.reading reads itself (no extra needed)."""
SUPPORTED_SUFFIXES = (*TEXT_SUFFIXES, *READERS)
"""Every file type a corpus may hold; spelled here, beside the readers, so the reader and the command
line's help (which must not load the reader's libraries) list the same."""

PAGE_MEANING = {".pdf": "page", ".docx": "page", ".pptx": "slide"}
"""What a passage's `page` counts for each document type (docs/CORPORA.md, "Corpora: formats and languages")."""
