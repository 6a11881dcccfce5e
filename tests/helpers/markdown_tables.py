"""Markdown tables whose rows do not have their header's number of cells: a cell holding an unescaped `|`
shifts every cell after it into the wrong column, which a reader cannot see in the rendered page."""

from __future__ import annotations

import re

_PIPE = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> int:
    return len(_PIPE.split(line.strip())) - 2


def ragged_tables(markdown: str) -> list[str]:
    """The header line of each table with a row (or its separator) of another width, with the widths."""
    found, lines = [], markdown.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|") or (i and lines[i - 1].startswith("|")):
            continue
        width, j = _cells(line), i + 1
        while j < len(lines) and lines[j].startswith("|"):
            if _cells(lines[j]) != width:
                found.append(f"{line} ({width} cells) / line {j + 1}: {_cells(lines[j])} cells")
                break
            j += 1
    return found
