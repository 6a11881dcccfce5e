"""What every report model shares: the schema version, closed sections, and the writer's null reasons.

Why closed (`extra="forbid"`): a figure a method adds without adding it to its model fails at once in the
tests instead of slipping into report.json unannounced; the published JSON Schema
(examiner/reporting/schema/) says the same with `additionalProperties: false`.

The one report writer (examiner/reporting/writer.py) turns a non-finite number into null and puts a
`<key>_null_reason` beside it. Those keys are part of the file format, not of the figures: the schema
allows them on every object (`patternProperties`), and a model reading a report back drops them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

SCHEMA_VERSION = 1
"""Version of the report.json format. Bump it (and ship report-v<N>.schema.json) whenever a field is
removed, renamed or changes meaning; docs/REPORT-SCHEMA.md says how."""
LEGACY_VERSION = 0
"""The version a report.json written before versioning (no `schema_version`) is read as."""
NULL_REASON = "_null_reason"
"""Suffix of the key that explains a null which stands for a non-finite number (see the writer)."""


def without_null_reasons(value: Any) -> Any:
    """A mapping without the writer's `<key>_null_reason` entries (other values are returned as they are)."""
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if not (isinstance(k, str) and k.endswith(NULL_REASON))}
    return value


class Section(BaseModel):
    """A closed part of a report: unknown keys are refused, the writer's null reasons are dropped on reading."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_null_reasons(cls, data: Any) -> Any:
        return without_null_reasons(data)


Figure = float | None
"""A number that may be undefined for the data (null in report.json, with its reason beside it)."""
FigureMap = Annotated[dict[str, Figure], BeforeValidator(without_null_reasons)]
"""Figures by name (e.g. a row of a win-rate matrix), some possibly undefined."""


__all__ = ["Figure", "FigureMap", "LEGACY_VERSION", "NULL_REASON", "SCHEMA_VERSION", "Section",
           "without_null_reasons"]
