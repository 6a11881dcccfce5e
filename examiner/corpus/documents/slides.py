"""PowerPoint (.pptx) files through python-pptx: one page per slide, its text frames and tables in shape
order (speaker notes are left out: they are not what the audience reads)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from examiner.corpus.documents import DEFAULT_LIMITS, Page, ReadLimits, Unreadable, failure, missing_extra
from examiner.corpus.documents.package import check_package


def _shape_paragraphs(shapes: Iterable[Any]) -> Iterable[str]:
    for shape in shapes:
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            for paragraph in shape.text_frame.paragraphs:
                text = "".join(run.text for run in paragraph.runs).strip()
                if text:
                    yield text
        elif getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                cells = [cell.text.strip() for cell in row.cells]
                if any(cells):
                    yield " | ".join(c for c in cells if c)
        elif hasattr(shape, "shapes"):  # a group shape
            yield from _shape_paragraphs(shape.shapes)


def read_pptx(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> list[Page]:
    """One page per slide (numbered from 1), paragraphs separated by blank lines. The package is checked
    first (examiner.corpus.documents.package); whatever python-pptx then raises on a damaged file is a skip reason."""
    try:
        from pptx import Presentation
    except ImportError:
        raise missing_extra("python-pptx", ".pptx") from None
    check_package(path, "PowerPoint", limits)
    deadline = limits.deadline()
    try:
        slides = Presentation(str(path)).slides
        if error := limits.too_many_pages(len(slides), "slides"):
            raise error
        pages, chars = [], 0
        for number, slide in enumerate(slides, start=1):
            deadline.check()
            pages.append(Page(number, "\n\n".join(_shape_paragraphs(slide.shapes))))
            chars += len(pages[-1].text)
            if error := limits.text_too_long(chars):
                raise error
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file raises whatever its parser met; it is skipped
        raise failure("PowerPoint file", exc) from None
    return pages
