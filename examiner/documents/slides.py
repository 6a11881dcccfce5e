"""PowerPoint (.pptx) files through python-pptx: one page per slide, its text frames and tables in shape
order (speaker notes are left out: they are not what the audience reads)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from examiner.documents import Page, Unreadable, missing_extra


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


def read_pptx(path: Path) -> list[Page]:
    """One page per slide (numbered from 1), paragraphs separated by blank lines."""
    try:
        from pptx import Presentation
        from pptx.exc import PackageNotFoundError
    except ImportError:
        raise missing_extra("python-pptx", ".pptx") from None
    try:
        deck = Presentation(str(path))
    except (PackageNotFoundError, KeyError, ValueError, OSError) as exc:
        raise Unreadable(f"unreadable PowerPoint file ({type(exc).__name__}: {exc})".splitlines()[0][:200]) from None
    return [Page(number, "\n\n".join(_shape_paragraphs(slide.shapes)))
            for number, slide in enumerate(deck.slides, start=1)]
