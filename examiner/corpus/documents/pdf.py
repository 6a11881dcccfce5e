"""PDF pages through pypdf: the text layer of each page, in reading order as pypdf extracts it, its printed
lines joined back into paragraphs (examiner.corpus.documents.pdf_paragraphs) so a page is several
passages, not one.

Within the reading limits: pypdf's own caps on what one stream may inflate to are set to
`--max-document-mb` for the read (pypdf raises LimitReachedError past them), the page count is checked
before any page is extracted, and the clock and the text gathered so far are checked after every page.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from examiner.corpus.documents import DEFAULT_LIMITS, LimitReached, Page, ReadLimits, Unreadable, failure, missing_extra
from examiner.corpus.documents.pdf_paragraphs import page_lines, paragraphs

log = logging.getLogger(__name__)


def read_pdf(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> list[Page]:
    """Every page's text. A PDF whose pages carry no text at all (a scan) raises Unreadable: examiner does
    not transcribe page images, so such a file is skipped with that reason."""
    try:
        from pypdf import PdfReader
    except ImportError:
        raise missing_extra("pypdf", ".pdf") from None
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # a damaged file: examiner's one skip line, not pypdf's dozens
    try:
        with _stream_limits(limits.max_bytes):
            pages = _read_pages(PdfReader(path), limits)
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file raises whatever its parser met; it is skipped
        if type(exc).__name__ == "LimitReachedError":
            raise LimitReached(f"a stream inflates past {limits.max_document_mb:g} MB, the limit "
                               f"(--max-document-mb)") from None
        raise failure("PDF", exc) from None
    if not pages:
        raise Unreadable("PDF without pages")
    if not any(p.text for p in pages):
        raise Unreadable(f"no text layer on any of its {len(pages)} page(s) (a scanned PDF? page images "
                         f"are not transcribed)")
    blank = [p.number for p in pages if not p.text]
    if blank:
        log.info("%s: %d page(s) without text (images?): %s", path, len(blank), blank[:20])
    return pages


def _read_pages(reader: Any, limits: ReadLimits) -> list[Page]:
    """The pages' texts, the page count, the clock and the text size checked against the limits."""
    deadline = limits.deadline()
    if reader.is_encrypted and not reader.decrypt(""):
        raise Unreadable("encrypted PDF (needs a password)")
    if error := limits.too_many_pages(len(reader.pages)):
        raise error
    pages, chars = [], 0
    for number, page in enumerate(reader.pages, start=1):
        deadline.check()
        pages.append(Page(number, _page_text(page)))
        chars += len(pages[-1].text)
        if error := limits.text_too_long(chars):
            raise error
    deadline.check()
    return pages


_OUTPUT_LIMITS = ("maximum_declared_stream_length", "array_based_stream_maximum_output_length",
                  "jbig2_maximum_output_length", "lzw_maximum_output_length", "run_length_maximum_output_length",
                  "zlib_maximum_output_length", "brotli_maximum_output_length")
"""pypdf 7's Configuration fields bounding what one stream may inflate to."""


@contextmanager
def _stream_limits(max_bytes: int) -> Iterator[None]:
    """pypdf's caps on inflated stream sizes set to `max_bytes` for one read: through its Configuration
    (pypdf 7 and later), else through the module constants of older versions (restored afterwards)."""
    import pypdf

    if hasattr(pypdf, "apply_configuration"):
        fields = set(getattr(pypdf.Configuration, "__dataclass_fields__", {}))
        with pypdf.apply_configuration(**{name: max_bytes for name in _OUTPUT_LIMITS if name in fields}):
            yield
        return
    import pypdf.filters as filters

    names = [name for name, value in vars(filters).items()
             if name.isupper() and name.endswith("_LENGTH") and "MAX" in name and isinstance(value, int)]
    saved = {name: getattr(filters, name) for name in names}
    try:
        for name in names:
            setattr(filters, name, max_bytes)
        yield
    finally:
        for name, value in saved.items():
            setattr(filters, name, value)


def _page_text(page: Any) -> str:
    """The page's paragraphs separated by blank lines, each paragraph's printed lines joined into one."""
    return "\n\n".join(paragraphs(page_lines(page)))
