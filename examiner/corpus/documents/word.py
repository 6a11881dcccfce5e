"""Word (.docx) files through python-docx: paragraphs and tables in body order, split into pages.

A .docx file stores no page layout. Pages are counted from the breaks the file records: explicit page
breaks, and the breaks Word noted where it broke pages when it last laid the document out
(`lastRenderedPageBreak`). A file written by a program that never laid it out counts only explicit breaks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from examiner.corpus.documents import DEFAULT_LIMITS, Deadline, Page, ReadLimits, Unreadable, failure, missing_extra
from examiner.corpus.documents.package import check_package

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class _Pager:
    """Collects paragraphs page by page while the body is walked, within the reading limits."""

    def __init__(self, limits: ReadLimits = DEFAULT_LIMITS) -> None:
        self.pages: list[list[str]] = [[]]
        self.line: list[str] = []
        self.just_broke = False
        """A hard break was met and no text since: Word's rendered break at the same place is the same page."""
        self.limits = limits
        self.chars = 0

    def text(self, value: str) -> None:
        if value:
            self.line.append(value)
            self.just_broke = False
            self.chars += len(value)
            if error := self.limits.text_too_long(self.chars):
                raise error

    def page_break(self, rendered: bool) -> None:
        if rendered and (self.just_broke or not (self.line or self.pages[-1])):
            return
        self.end_paragraph()
        self.pages.append([])
        self.just_broke = not rendered
        if error := self.limits.too_many_pages(len(self.pages)):
            raise error

    def end_paragraph(self) -> None:
        paragraph = "".join(self.line).strip()
        if paragraph:
            self.pages[-1].append(paragraph)
        self.line = []


def _walk_paragraph(element: Any, pager: _Pager) -> None:
    for node in element.iter():
        tag = node.tag
        if tag == f"{_W}t":
            pager.text(node.text or "")
        elif tag == f"{_W}tab":
            pager.text("\t")
        elif tag == f"{_W}br":
            if node.get(f"{_W}type") == "page":
                pager.page_break(rendered=False)
            else:
                pager.text("\n")
        elif tag == f"{_W}lastRenderedPageBreak":
            pager.page_break(rendered=True)
    pager.end_paragraph()


def _walk_table(element: Any, pager: _Pager) -> None:
    """One paragraph per table row, cells separated by ' | '."""
    for row in element.iter(f"{_W}tr"):
        cells = []
        for cell in row.iter(f"{_W}tc"):
            cells.append(" ".join("".join(t.text or "" for t in p.iter(f"{_W}t")).strip()
                                  for p in cell.iter(f"{_W}p")).strip())
        pager.text(" | ".join(c for c in cells if c))
        pager.end_paragraph()


def read_docx(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> list[Page]:
    """Pages of paragraph text (tables row by row), in body order. The package is checked first
    (examiner.corpus.documents.package); whatever python-docx then raises on a damaged file is a skip reason."""
    try:
        import docx
    except ImportError:
        raise missing_extra("python-docx", ".docx") from None
    check_package(path, "Word", limits)
    deadline = limits.deadline()
    try:
        body = docx.Document(str(path)).element.body
        pager = _Pager(limits)
        _walk_body(body, pager, deadline)
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file raises whatever its parser met; it is skipped
        raise failure("Word file", exc) from None
    return [Page(number, "\n\n".join(paragraphs)) for number, paragraphs in enumerate(pager.pages, start=1)]


def _walk_body(body: Any, pager: _Pager, deadline: Deadline) -> None:
    """Paragraphs and tables of the body in order, the clock checked every hundred of them."""
    for index, child in enumerate(body.iterchildren()):
        if index % 100 == 0:
            deadline.check()
        if child.tag == f"{_W}p":
            _walk_paragraph(child, pager)
        elif child.tag == f"{_W}tbl":
            _walk_table(child, pager)
