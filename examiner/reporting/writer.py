"""The one report writer: strict JSON, Markdown and HTML for every method (exam, judge, meta).

Each method builds its report once as a typed model (examiner/reporting/model/) and renders it; this
module decides how it reaches the disk, the same way for all:

- report.json is the model's dump, led by `schema_version` and `kind` (the published JSON Schema in
  examiner/reporting/schema/ describes it). Optional sections a method did not fill stay out of the file.

- JSON is strict. NaN and Infinity are not JSON (most parsers outside Python reject them), so a
  non-finite number becomes null and a `<key>_null_reason` next to it says what it was (for a list,
  the reason sits next to the list and names the item). The result then goes through
  `json.dumps(..., allow_nan=False)`, so a value this module fails to clean raises instead of slipping out.
- Markdown and HTML show an undefined number the same way everywhere (`cell`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from examiner.core.owned import check_replaceable, refuse_link, write_output
from examiner.core.plain_text import visible_controls
from examiner.core.redact import redact_text
from examiner.core.rundir import report_paths
from examiner.reporting.model import REPORT, Section
from examiner.reporting.model.base import NULL_REASON

UNDEFINED = "n/a"
"""How Markdown and HTML show a number that is undefined (null, NaN, infinite)."""


def _why(value: float) -> str:
    if math.isnan(value):
        return "undefined for these data (NaN), e.g. a correlation over a constant ranking or an empty sample"
    return f"not finite ({'+' if value > 0 else '-'}Infinity)"


def _finite(value: Any) -> tuple[Any, str | None]:
    """(JSON-ready value, reason) for a scalar: a non-finite float is (None, reason)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None, _why(value)
    return value, None


def strict(value: Any) -> Any:
    """A JSON-ready copy of `value`: non-finite floats -> null plus a reason, keys -> str, tuples -> lists."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if isinstance(item, (Mapping, list, tuple)):
                out[name], reason = strict(item), _list_reason(item)
            else:
                out[name], reason = _finite(item)
            if reason is not None:
                out[name + NULL_REASON] = reason
        return out
    if isinstance(value, (list, tuple)):
        return [strict(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    return _finite(value)[0]


def _list_reason(items: Any) -> str | None:
    """For a list holding non-finite numbers directly: which items became null, and why."""
    if not isinstance(items, (list, tuple)):
        return None
    reasons = [f"item {i}: {why}" for i, item in enumerate(items) if (why := _finite(item)[1]) is not None]
    return "; ".join(reasons) or None


def dumps(data: Any, indent: int | None = 2) -> str:
    """Strict JSON text of `data` (see the module docstring)."""
    return json.dumps(strict(data), indent=indent, ensure_ascii=False, allow_nan=False)


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> Path:
    """A whole JSONL file of records, each line strict JSON."""
    path.write_text("".join(dumps(record, indent=None) + "\n" for record in records), encoding="utf-8")
    return path


def as_report(data: Section | Mapping[str, Any]) -> Section:
    """The report model of `data`: a model as it is; a mapping (a caller that still builds its report as a
    dict) validated into the model its `kind` names. A mapping without `kind` is told apart the way
    report.json files written before versioning are (see `legacy_kind`)."""
    if isinstance(data, Section):
        return data
    return REPORT.validate_python({**data, "kind": data.get("kind") or legacy_kind(data)})


def legacy_kind(data: Mapping[str, Any]) -> str:
    """The kind of report data that do not say it: by the keys each kind always has."""
    if data.get("method") == "metric-stats":
        return "metric-stats"
    if "rankings" in data and "config" in data:
        return "meta"
    if "method" in data:
        return "judge"
    if "run" in data and "targets" in data:
        return "exam"
    if "disagreements" in data:
        return "compare"
    raise ValueError(f"not a report: keys {sorted(data)[:8]}")


def report_data(report: Section) -> dict[str, Any]:
    """What report.json holds: `schema_version` and `kind` first, then every field the method set."""
    dumped = report.model_dump(mode="python", exclude_unset=True)
    return {"schema_version": getattr(report, "schema_version"), "kind": getattr(report, "kind"),  # noqa: B009
            **dumped}  # (a Section declares neither; every report model does)


def write_report(folder: Path, report: Section | Mapping[str, Any], *, markdown: str | None = None,
                 html: str | None = None, stem: str = "", run_folder: bool = False) -> dict[str, Path]:
    """report.json (always), report.md and report.html (when the method renders them) in `folder`.

    Returns {"json", "md", "html"} -> path for the files written; `stem` prefixes the names. Every file
    goes through examiner.core.redact on its way out, so a credential that an older run folder still holds
    (its config.yaml or run.json written before redaction) never reaches a report.

    An existing file is replaced only when examiner wrote it (examiner.core.owned), else one UserError
    before anything is written; `run_folder`: `folder` is a run read as such, whose reports are its own
    (only links are refused there). Files are replaced, never written through a link.
    """
    folder.mkdir(parents=True, exist_ok=True)
    paths = report_paths(folder, stem)
    rendered = {"json": dumps(report_data(as_report(report))) + "\n", "md": markdown, "html": html}
    wanted = {kind: text for kind, text in rendered.items() if text is not None}
    for kind in wanted:
        if run_folder:
            refuse_link(paths[kind])
        else:
            check_replaceable(paths[kind])
    if "md" in wanted:  # nothing examiner writes into Markdown is a control character; someone else's text may be
        wanted["md"] = visible_controls(wanted["md"])
    return {kind: write_output(paths[kind], redact_text(text), run_folder=run_folder) for kind, text in wanted.items()}


def cell(value: Any, digits: int = 3) -> str:
    """A table cell: floats to `digits` places, undefined numbers as n/a, anything else as text."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return UNDEFINED
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


__all__ = ["NULL_REASON", "UNDEFINED", "as_report", "cell", "dumps", "legacy_kind", "report_data", "strict",
           "write_jsonl", "write_report"]
