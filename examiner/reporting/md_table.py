"""One Markdown table: the cells put on one line with their pipes escaped.

Its own module so that the report's section renderers (examiner/reporting/*_section.py) can draw tables
without importing examiner.reporting.markdown, which imports them.
"""

from __future__ import annotations

from typing import Any

from examiner.core.plain_text import one_line


def table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table of `rows` under `header` (any cell or heading text on one line, `|` escaped)."""

    def escaped(v: Any) -> str:
        return one_line(str(v)).replace("|", "\\|")

    lines = ["| " + " | ".join(escaped(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(escaped(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


__all__ = ["table"]
