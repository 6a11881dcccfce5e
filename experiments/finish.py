"""How every experiment ends: its figures saved as JSON (by default under experiments/results/), then one
`RESULT name=value ...` line, the line that runs are compared by.

The scripts of this folder import it as a sibling module (`python experiments/NAME.py` puts this folder
first on the import path).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def save_json(data: Any, path: Path, *, indent: int = 1, default: Callable[[Any], Any] | None = None) -> Path:
    """Write `data` as JSON to `path`, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, default=default) + "\n")
    return path


def print_result(figures: Mapping[str, Any]) -> None:
    """The closing `RESULT name=value ...` line (values already formatted as the experiment wants them)."""
    print("RESULT " + " ".join(f"{name}={value}" for name, value in figures.items()))
