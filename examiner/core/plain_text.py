"""Text from models, corpora and names made safe for a human-readable output.

Why: an answer, a judge's reason or a document name is written by someone else. Raw, a control sequence
in it reaches the reader's terminal (a clipboard write, a terminal reset) and a line break in it lets it
write its own lines into report.md: a forged heading, a bare command line. Each output neutralises it in
its own way: control characters become visible escapes (`\\x1b`; on the terminal through
examiner.core.console's console, which also reads no rich markup in strings), text placed inside a line of
Markdown stays on that line, its raw HTML shown as text, and a longer text (a judge's reason) is a quoted
block whose lines cannot open a heading, list or fence. JSON and HTML escape on their own.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 and C1 control characters and DEL, except tab and line feed (text layout of examiner's own)."""

_LINE_BREAKS = re.compile(r"\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
"""Everything a Markdown reader or a terminal may take as the end of a line."""


def visible_controls(text: str) -> str:
    """`text` with each control character but tab and line feed written as a visible `\\xNN` escape."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def one_line(text: str) -> str:
    """`text` on one line (each line break a space) with its control characters visible."""
    return visible_controls(_LINE_BREAKS.sub(" ", text))


def markdown_inline(text: str) -> str:
    """Someone else's text inside a line of Markdown: one line, `<` and `>` shown rather than read as HTML."""
    return one_line(text).replace("<", "&lt;").replace(">", "&gt;")


_BLOCK_START = re.compile(r"^(?:[#>+*=|~`_-]|\d+[.)])")
"""What makes a line of Markdown more than a paragraph's text: a heading, a quote, a list item, a rule, a
table row, a fence (escaped with a backslash where it opens a line)."""


def markdown_quote(text: str, indent: str = "") -> list[str]:
    """Someone else's text (a judge's reason) as the lines of a Markdown quoted block, each `indent> ...`:
    each of its lines stays inside the quote as plain text (no heading, list or fence of its own), with its
    control characters visible and its raw HTML shown as text."""
    lines = []
    for raw in _LINE_BREAKS.split(text.strip()):
        line = markdown_inline(raw.strip())
        start = _BLOCK_START.match(line)
        if start:  # `\#`, `\-`; a numbered item's `1\.` (a backslash escapes punctuation only)
            at = start.end() - 1 if line[0].isdigit() else 0
            line = line[:at] + "\\" + line[at:]
        lines.append(f"{indent}> {line}".rstrip())
    return lines


__all__ = ["markdown_inline", "markdown_quote", "one_line", "visible_controls"]
