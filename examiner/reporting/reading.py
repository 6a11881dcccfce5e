"""Read a report.json back through its model, whatever version of examiner wrote it.

A report.json written before versioning has no `schema_version`: it is read as version 0 (LEGACY_VERSION),
its kind told apart by its keys, and `note` says so; a file the model cannot read raises a UserError that
names the file and says how to rebuild it (`examiner report RUN` for an exam run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from examiner.core.errors import UserError
from examiner.core.rundir import REPORT_JSON
from examiner.reporting.model import LEGACY_VERSION, REPORT, SCHEMA_VERSION, Section
from examiner.reporting.writer import legacy_kind


@dataclass(frozen=True)
class LoadedReport:
    """A report read from disk: the model, the version the file says it has, and a note when it is old."""

    report: Section
    version: int
    note: str | None = None


def load_report(path: str | Path) -> LoadedReport:
    """The report at `path` (a report.json, or a folder holding one) as its model."""
    file = Path(path)
    if file.is_dir():
        file = file / REPORT_JSON
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{file}: not a readable report.json ({exc})") from None
    version = data.get("schema_version", LEGACY_VERSION) if isinstance(data, dict) else LEGACY_VERSION
    if not isinstance(data, dict) or not isinstance(version, int) or version > SCHEMA_VERSION:
        raise UserError(f"{file}: report schema version {version!r} is newer than this examiner reads "
                        f"({SCHEMA_VERSION}); upgrade examiner")
    note = None
    if version == LEGACY_VERSION:
        note = (f"{file} was written before report.json carried a schema version; read as version "
                f"{LEGACY_VERSION}. `examiner report RUN` rebuilds an exam run's reports in the current version.")
    try:
        kind = data.get("kind") or legacy_kind(data)
        report = REPORT.validate_python({**data, "schema_version": version, "kind": kind})
    except (ValueError, ValidationError) as exc:
        raise UserError(f"{file}: does not match report schema version {SCHEMA_VERSION} "
                        f"({str(exc).splitlines()[0]}); `examiner report RUN` rebuilds an exam run's reports") from None
    return LoadedReport(report=report, version=version, note=note)


__all__ = ["LoadedReport", "load_report"]
