"""Exporting a run as a library call: an exam run as a dataset (JSONL, Parquet or a Hugging Face
datasets folder) with its dataset card. Nothing is uploaded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from examiner.api.checks import output_dir
from examiner.api.settings import path_text


class ExportOptions(BaseModel):
    """`examiner export`: one row per (unit, question, answer, verdict), and README.md as the card."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_dir: str
    """An exam run folder."""
    format: Literal["jsonl", "parquet", "hf"]
    """jsonl (no extra needed), parquet, or hf (a folder for datasets.load_from_disk); parquet and hf need
    pip install 'examiner[export]'."""
    out: str
    """A new (or empty) folder for the data and README.md."""

    _paths = field_validator("run_dir", "out", mode="before")(path_text)


@dataclass(frozen=True)
class ExportResult:
    """What was written: how many rows, where, and which files."""

    rows: int
    folder: Path
    files: tuple[str, ...]


def export_run(options: ExportOptions) -> ExportResult:
    """Write the exam run as a dataset with its card, as `examiner export` does."""
    from examiner.reporting.exports import export_run as export

    output_dir(options.out, "DIR")
    written = export(options.run_dir, options.format, options.out)
    return ExportResult(rows=int(written["rows"]), folder=Path(written["folder"]), files=tuple(written["files"]))
