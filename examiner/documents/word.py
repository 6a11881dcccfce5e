"""Word (.docx) files through python-docx: paragraphs and tables in body order, split into pages.

A .docx file stores no page layout. Pages are counted from the breaks the file records: explicit page
breaks, and the breaks Word noted where it broke pages when it last laid the document out
(`lastRenderedPageBreak`). A file written by a program that never laid it out counts only explicit breaks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from examiner.documents import Page, Unreadable, missing_extra

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class _Pager:
    """Collects paragraphs page by page while the body is walked."""

    def __init__(self) -> None:
        self.pages: list[list[str]] = [[]]
        self.line: list[str] = []
        self.just_broke = False
        """A hard break was met and no text since: Word's rendered break at the same place is the same page."""

    def text(self, value: str) -> None:
        if value:
            self.line.append(value)
            self.just_broke = False

    def page_break(self, rendered: bool) -> None:
        if rendered and (self.just_broke or not (self.line or self.pages[-1])):
            return
        self.end_paragraph()
        self.pages.append([])
        self.just_broke = not rendered

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


def read_docx(path: Path) -> list[Page]:
    """Pages of paragraph text (tables row by row), in body order."""
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
    except ImportError:
        raise missing_extra("python-docx", ".docx") from None
    try:
        body = docx.Document(str(path)).element.body
    except (PackageNotFoundError, KeyError, ValueError, OSError) as exc:
        raise Unreadable(f"unreadable Word file ({type(exc).__name__}: {exc})".splitlines()[0][:200]) from None
    pager = _Pager()
    for child in body.iterchildren():
        if child.tag == f"{_W}p":
            _walk_paragraph(child, pager)
        elif child.tag == f"{_W}tbl":
            _walk_table(child, pager)
    return [Page(number, "\n\n".join(paragraphs)) for number, paragraphs in enumerate(pager.pages, start=1)]
