"""A PDF page's lines -> paragraphs.

A PDF stores positioned lines, not paragraphs: pypdf's text has one line per printed line and rarely a
blank line between paragraphs, so a page read as is becomes one passage of several thousand characters.
This module puts the paragraphs back. A paragraph ends where

- the next line is blank, or sits further below than the page's usual line spacing or than two and a
  half times its font size (a paragraph gap), or above the previous line (a new column or text box);
- the font size changes (a heading and its body);
- the line is clearly shorter than the page's full lines and ends a sentence (the last line of a
  paragraph set without a gap);
- the next line starts a list item (a bullet, `1.`, `a)`).

Lines of a paragraph are joined with a space; a word hyphenated at the line end is joined without its
hyphen, and lines of Chinese or Japanese text are joined without a space.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

GAP_FACTOR = 1.4
"""A line this many times the page's usual line spacing below the previous one starts a paragraph."""
GAP_SIZES = 2.5
"""A line this many times its font size below the previous one starts a paragraph whatever the page's
spacing (a page of few lines has too few distances to learn its spacing from)."""
SHORT_LINE = 0.7
"""A line shorter than this share of the page's full lines that ends a sentence ends its paragraph."""
SIZE_CHANGE = 1.0
"""Font sizes (points) further apart than this start a new paragraph."""

_SENTENCE_END = re.compile(r"[.!?:;…。！？][\"'”’)\]»]*$")
_LIST_ITEM = re.compile(r"^(?:[•▪◦‣●○■□–—*-]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s")
_HYPHENATED = re.compile(r"[^\W\d_]-$")


@dataclass(frozen=True)
class Line:
    """One printed line: its text, the height of its baseline on the page (PDF units, larger is higher;
    None when unknown) and its font size (0 when unknown)."""

    text: str
    y: float | None = None
    size: float = 0.0


def page_lines(page: Any) -> list[Line]:
    """The lines of a pypdf page with their positions, from the text pypdf extracts (its visitor sees every
    piece of text with its matrices; the pieces join to exactly the extracted text). Blank lines are kept
    as Line("")."""
    pieces: list[tuple[str, float | None, float]] = []

    def visit(text: str, cm: Sequence[float], tm: Sequence[float], _font: Any, size: float) -> None:
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5] if text.strip() else None
        scale = abs(tm[3] * cm[3]) or 1.0
        pieces.append((text, y, float(size or 0) * scale))

    text = page.extract_text(visitor_text=visit) or ""
    if "".join(p[0] for p in pieces) != text:  # an older pypdf whose visitor saw other pieces: no positions
        return [Line(line) for line in _split_lines(text)]
    lines: list[Line] = []
    current, y, size = "", None, 0.0
    for piece, piece_y, piece_size in pieces:
        parts = _split_lines(piece)
        for index, part in enumerate(parts):
            if index:
                lines.append(Line(current, y, size))
                current, y, size = "", None, 0.0
            current += part
            if part.strip() and y is None:
                y, size = piece_y, piece_size
    lines.append(Line(current, y, size))
    return lines


def _split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def paragraphs(lines: Sequence[Line]) -> list[str]:
    """The paragraphs of a page's lines, in order, each one line of text (see the module's rules)."""
    lines = [Line(" ".join(line.text.split()), line.y, line.size) for line in lines]
    spacing = _usual_spacing(lines)
    full = _full_length(lines)
    result: list[str] = []
    current = ""
    previous: Line | None = None
    for line in lines:
        if not line.text:
            if current:
                result.append(current)
            current, previous = "", None
            continue
        if previous is not None and _breaks(previous, line, spacing, full):
            result.append(current)
            current = ""
        current = _join(current, line.text) if current else line.text
        previous = line
    if current:
        result.append(current)
    return result


def _usual_spacing(lines: Sequence[Line]) -> float | None:
    """The distance between consecutive lines of a paragraph: the lower quartile of the distances going
    down the page (most distances are line spacing, the larger ones paragraph gaps; None without any)."""
    gaps = sorted(a.y - b.y for a, b in zip(lines, lines[1:])
                  if a.text and b.text and a.y is not None and b.y is not None and a.y - b.y > 0.5)
    return gaps[len(gaps) // 4] if gaps else None


def _full_length(lines: Sequence[Line]) -> float:
    """The length of the page's full lines: the upper quartile of its line lengths (0 with fewer than 4)."""
    lengths = sorted(len(line.text) for line in lines if line.text)
    return float(lengths[(3 * len(lengths)) // 4]) if len(lengths) >= 4 else 0.0


def _breaks(previous: Line, line: Line, spacing: float | None, full: float) -> bool:
    """Whether `line` starts a new paragraph after `previous`."""
    if previous.y is not None and line.y is not None:
        drop = previous.y - line.y
        if drop < -0.5 * max(previous.size, 1.0):
            return True  # above the previous line: another column or box
        if spacing is not None and drop > GAP_FACTOR * spacing:
            return True
        if drop > GAP_SIZES * max(previous.size, line.size) > 0:
            return True
    if previous.size and line.size and abs(previous.size - line.size) > SIZE_CHANGE:
        return True
    if _LIST_ITEM.match(line.text):
        return True
    return bool(full and len(previous.text) < SHORT_LINE * full and _SENTENCE_END.search(previous.text))


def _join(text: str, line: str) -> str:
    """`text` continued by the next printed line of its paragraph."""
    if _HYPHENATED.search(text) and line[:1].islower():
        return text[:-1] + line
    if _wide(text[-1]) and _wide(line[0]):
        return text + line
    return f"{text} {line}"


def _wide(char: str) -> bool:
    """A character of a script written without spaces between words (Chinese, Japanese)."""
    return unicodedata.east_asian_width(char) in ("W", "F")
