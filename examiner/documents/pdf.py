"""PDF pages through pypdf: the text layer of each page, in reading order as pypdf extracts it."""

from __future__ import annotations

import logging
from pathlib import Path

from examiner.documents import Page, Unreadable, missing_extra

log = logging.getLogger(__name__)


def read_pdf(path: Path) -> list[Page]:
    """Every page's text. A PDF whose pages carry no text at all (a scan) raises Unreadable: examiner does
    not transcribe page images, so such a file is skipped with that reason."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        raise missing_extra("pypdf", ".pdf") from None
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted PDF (needs a password)")
        pages = [Page(number, _page_text(page.extract_text() or ""))
                 for number, page in enumerate(reader.pages, start=1)]
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise Unreadable(f"unreadable PDF ({type(exc).__name__}: {exc})".splitlines()[0][:200]) from None
    if not pages:
        raise Unreadable("PDF without pages")
    if not any(p.text for p in pages):
        raise Unreadable(f"no text layer on any of its {len(pages)} page(s) (a scanned PDF? page images "
                         f"are not transcribed)")
    blank = [p.number for p in pages if not p.text]
    if blank:
        log.info("%s: %d page(s) without text (images?): %s", path, len(blank), blank[:20])
    return pages


def _page_text(text: str) -> str:
    """pypdf's text with trailing spaces and runs of blank lines tidied; lines stay as laid out."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip()
