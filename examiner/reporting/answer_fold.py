"""An answer shown whole on the review pages, folded when long: its first lines, then all of it on a click.

Why: people label what they read. The review page and the random-sample page used to show a 400-character
excerpt, so a reviewer labelled answers whose end they never saw, and those labels feed the calibrated
accuracy (PPI++). Here the whole text is always in the page; a long one sits in a <details> element (no
script needed, so the page's Content-Security-Policy stays as strict) whose summary is its first lines.
"""

from __future__ import annotations

from html import escape

FOLD_CHARS = 300
"""Longest answer shown open; a longer one is folded, its summary this many characters at most."""
FOLD_LINES = 3
"""Most lines an answer shown open may have; a longer one's summary is its first lines."""

FOLD_CSS = """
details.answer{display:inline}details.answer>summary{cursor:pointer;display:inline}
details.answer>summary .more{color:#4c78a8;font-size:.85em;white-space:nowrap}
details.answer[open]>summary .head{display:none}
.answer-text{white-space:pre-wrap}details.answer>.answer-text{display:block;border-left:2px solid #ccc;padding-left:.5em}
"""
"""The rules the folded answer needs (added to the review pages' style sheet)."""


def _head(text: str) -> str:
    """The first lines of `text`, at most FOLD_CHARS characters, cut at a word."""
    head = "\n".join(text.splitlines()[:FOLD_LINES])
    if len(head) > FOLD_CHARS:
        head = head[:FOLD_CHARS].rsplit(" ", 1)[0] if " " in head[:FOLD_CHARS] else head[:FOLD_CHARS]
    return head.rstrip()


def is_folded(text: str) -> bool:
    """Whether `text` is too long to show open (more than FOLD_CHARS characters or FOLD_LINES lines)."""
    return len(text) > FOLD_CHARS or len(text.splitlines()) > FOLD_LINES


def answer_html(text: str) -> str:
    """The whole answer as HTML (escaped): open when short, else folded under its first lines."""
    if not is_folded(text):
        return f"<span class=\"answer-text\">{escape(text)}</span>"
    return (f"<details class=\"answer\"><summary><span class=\"head answer-text\">{escape(_head(text))}… </span>"
            f"<span class=\"more\">(show all {len(text):,} characters)</span></summary>"
            f"<div class=\"answer-text\">{escape(text)}</div></details>")


__all__ = ["FOLD_CHARS", "FOLD_CSS", "FOLD_LINES", "answer_html", "is_folded"]
