"""What kill/resume tests compare between a killed run folder and an uninterrupted one: lines per record
file and ids written twice."""

from __future__ import annotations

from pathlib import Path

from examiner.core.jsonl import iter_jsonl
from examiner.core.records import record_key
from examiner.core.rundir import RECORD_FILES


def lines(path: Path) -> list[str]:
    """The file's lines ([] when absent)."""
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


def record_lines(run_dir: Path) -> dict[str, int]:
    """Lines per record file of a run directory."""
    return {name: len(lines(run_dir / name)) for name in RECORD_FILES.values()}


def repeated_ids(run_dir: Path) -> dict[str, int]:
    """Per record file, the lines whose id an earlier line of the file already had."""
    repeats = {}
    for model, name in RECORD_FILES.items():
        ids = [record_key(r) for r in iter_jsonl(run_dir / name, model.model_validate_json)]
        repeats[name] = len(ids) - len(set(ids))
    return repeats
