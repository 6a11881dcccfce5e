"""Exporting a run as a library call: an exam run as a dataset (JSONL, Parquet or a Hugging Face
datasets folder) with its dataset card, as an Inspect AI eval log, or as OpenTelemetry GenAI spans. Nothing
is uploaded, except the spans to the OTLP endpoint a caller names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from examiner.api.checks import output_dir
from examiner.core.owned import check_replaceable
from examiner.api.settings import path_text


class ExportOptions(BaseModel):
    """`examiner export`: one row per (unit, question, answer, verdict) and README.md as the card; or an Inspect
    eval log; or OpenTelemetry spans."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_dir: str
    """An exam run folder."""
    format: Literal["jsonl", "parquet", "hf", "inspect", "otel"]
    """jsonl (no extra needed), parquet, or hf (a folder for datasets.load_from_disk); parquet and hf need
    pip install 'examiner[export]'. inspect: an Inspect AI eval log (JSON, no extra needed). otel: OpenTelemetry
    GenAI spans (pip install 'examiner[otel]')."""
    out: str | None = None
    """jsonl, parquet, hf: a new (or empty) folder for the data and README.md; inspect: a folder of logs (the
    log is named as Inspect names its own, so `inspect view` lists it) or a .json file; otel: the JSON file of
    spans (or give otlp_endpoint instead)."""
    otlp_endpoint: str | None = None
    """otel only: send the spans to this OTLP/HTTP traces URL (e.g. http://localhost:4318/v1/traces) instead of
    writing a file; headers from OTEL_EXPORTER_OTLP_HEADERS."""
    corpus: tuple[str, ...] = ()
    """jsonl, parquet, hf: the corpus folders the run examined, whose SOURCE.md `Licence:` line or LICENSE file
    gives the card's licence (unknown without them). The run folder's own corpus_paths are not read: the
    folder may come from someone else and name any file."""

    _paths = field_validator("run_dir", "out", mode="before")(path_text)

    @model_validator(mode="after")
    def _destination(self) -> "ExportOptions":
        if self.otlp_endpoint is not None and self.format != "otel":
            raise ValueError("otlp_endpoint is for format 'otel' only")
        if self.format == "otel" and (self.out is None) == (self.otlp_endpoint is None):
            raise ValueError("format 'otel' takes either out (a JSON file) or otlp_endpoint, not both and not neither")
        if self.format != "otel" and self.out is None:
            raise ValueError(f"format '{self.format}' needs out")
        return self


@dataclass(frozen=True)
class ExportResult:
    """What was written: how many rows (samples for inspect, spans for otel), where, and which files."""

    rows: int
    folder: Path | None
    """The folder written into (None: the spans went to an OTLP endpoint)."""
    files: tuple[str, ...]
    kind: str = "rows"
    """What `rows` counts: rows, samples (inspect) or spans (otel)."""
    events: int = 0
    """otel: the gen_ai.evaluation.result events (one per verdict)."""


def _health_status(run_dir: str) -> str | None:
    """The run's health verdict (pass, warn, fail), computed as the report computes it."""
    from examiner.core.rundir import RunDir
    from examiner.exam.health import exam_health

    return exam_health(RunDir(run_dir).read()).status


def export_run(options: ExportOptions) -> ExportResult:
    """Write the exam run as a dataset with its card, an Inspect log, or spans, as `examiner export` does."""
    if options.format == "inspect":
        return _inspect(options)
    if options.format == "otel":
        return _otel(options)
    from examiner.reporting.exports import export_run as export

    out = str(options.out)
    output_dir(out, "DIR")
    written = export(options.run_dir, options.format, out, _health_status(options.run_dir), corpus=options.corpus)
    return ExportResult(rows=int(written["rows"]), folder=Path(written["folder"]), files=tuple(written["files"]))


def _inspect(options: ExportOptions) -> ExportResult:
    from examiner.reporting.inspect_log import write_inspect_log
    from examiner.reporting.run_reader import load_run

    out = Path(str(options.out))
    output_dir(out.parent if out.suffix == ".json" else out, "OUT")
    if out.suffix == ".json":
        check_replaceable(out, "OUT")  # before the run is read: one line, nothing written
    written = write_inspect_log(load_run(options.run_dir), out, _health_status(options.run_dir))
    path = Path(written["path"])
    return ExportResult(rows=int(written["samples"]), folder=path.parent, files=(path.name,), kind="samples")


def _otel(options: ExportOptions) -> ExportResult:
    from examiner.reporting.otel_spans import check_extra, export_spans
    from examiner.reporting.run_reader import load_run

    check_extra(options.otlp_endpoint)
    if options.out is not None:
        path = Path(options.out)
        output_dir(path.parent, "OUT")
        check_replaceable(path, "OUT")
        written = export_spans(load_run(options.run_dir), out=path)
        return ExportResult(rows=int(written["spans"]), folder=path.parent, files=(path.name,), kind="spans",
                            events=int(written["events"]))
    written = export_spans(load_run(options.run_dir), endpoint=options.otlp_endpoint)
    return ExportResult(rows=int(written["spans"]), folder=None, files=(), kind="spans", events=int(written["events"]))
