"""Validation of report.json files against the shipped JSON Schema, for the conftest hook and the tests.

Why jsonschema and not the models: the schema file is what users get; validating with an independent
validator checks the file itself, not only the models it was generated from.
"""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from examiner.reporting.json_schema import shipped_schema

REPORT_GLOB = "*report.json"
"""report.json and its prefixed forms (`<stem>report.json`, see examiner.core.rundir.report_paths)."""


def validator() -> Draft202012Validator:
    return Draft202012Validator(shipped_schema())


def problems_of(path: Path, check: Draft202012Validator | None = None) -> list[str]:
    """Why the report file at `path` does not match the schema (empty when it does)."""
    errors = (check or validator()).iter_errors(json.loads(path.read_text(encoding="utf-8")))
    return [f"{path}: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in errors]


def validate_reports_under(root: Path) -> tuple[int, list[str]]:
    """(how many report files were checked, the problems found) for every report file under `root`."""
    check = validator()
    checked, problems = 0, []
    for path in sorted(root.rglob(REPORT_GLOB)):
        if path.is_file():
            checked += 1
            problems += problems_of(path, check)[:3]
    return checked, problems
