"""The published JSON Schema of report.json, generated from the report models.

Why generated: the schema cannot say something the models do not, and a test holds the shipped file
(examiner/reporting/schema/report-v<N>.schema.json, package data) equal to what the models generate, so
the two never drift. Regenerate it after changing a model with `python -m examiner.reporting.json_schema`;
docs/REPORT-SCHEMA.md says when the version changes.

Two things the models cannot say are added here: every object may carry the writer's `<key>_null_reason`
strings (patternProperties), and every report holds `schema_version` (equal to SCHEMA_VERSION) and `kind`.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from examiner.reporting.model import REPORT, SCHEMA_VERSION
from examiner.reporting.model.base import NULL_REASON

SCHEMA_FILE = f"report-v{SCHEMA_VERSION}.schema.json"
SCHEMA_ID = f"https://github.com/examiner/examiner/schema/{SCHEMA_FILE}"
REPORT_KINDS = ("exam", "judge", "meta", "compare", "judge-vs-people", "metric-stats")
NULL_REASONS = {f"{NULL_REASON}$": {"type": "string", "description": "why the number beside it is null"}}


def _with_null_reasons(node: Any) -> None:
    """Allow `<key>_null_reason` strings on every object of the schema, however deep."""
    if isinstance(node, dict):
        if node.get("type") == "object":
            node["patternProperties"] = NULL_REASONS
        for value in node.values():
            _with_null_reasons(value)
    elif isinstance(node, list):
        for value in node:
            _with_null_reasons(value)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of report.json (every kind), as the models generate it."""
    generated = REPORT.json_schema()
    _with_null_reasons(generated)
    for definition in generated["$defs"].values():
        kind = definition.get("properties", {}).get("kind", {})
        if kind.get("const") in REPORT_KINDS:
            definition["properties"]["schema_version"] = {"const": SCHEMA_VERSION, "title": "Schema Version"}
            definition["required"] = ["schema_version", "kind", *definition.get("required", [])]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": f"examiner report.json, schema version {SCHEMA_VERSION}", **generated}


def schema_text() -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(report_schema(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def shipped_schema() -> dict[str, Any]:
    """The schema file shipped in the package (what users validate their report.json files with)."""
    text = resources.files("examiner.reporting").joinpath("schema", SCHEMA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def write_schema(folder: Path | None = None) -> Path:
    """Write the generated schema into the package's schema folder (or `folder`)."""
    target = (folder or Path(__file__).parent / "schema") / SCHEMA_FILE
    target.write_text(schema_text(), encoding="utf-8")
    return target


if __name__ == "__main__":
    print(write_schema())
