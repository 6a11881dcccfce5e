"""The one loader of users' datasets (JSONL, JSON arrays, the public `llmbar:SUBSET` and `summeval` sets, read
from the data folder where `examiner data pull` puts them) that `examiner judge`, `examiner meta` and
`examiner metric-stats` share.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from examiner.core.labels import Preference, preference_from_text
from examiner.corpus.reading import decode_text
from examiner.corpus.record_fields import field_value
from examiner.core.errors import UserError

from examiner.corpus.benchmarks import SUMMEVAL_FILE, data_file, llmbar_records

log = logging.getLogger(__name__)


# --- Datasets given to `examiner judge` and `examiner meta` ----------------------------------------------
# One loader and one bad-row policy for every method that reads a user's dataset: a record that cannot
# be used (broken JSON, not an object, a missing or malformed field, a repeated id) is named by where
# it is (JSONL line, JSON array index, LLMBar subset/index), skipped and counted; the run goes on with
# the others and says how many it skipped. Only a file that cannot be read at all is an error.

T = TypeVar("T")


@dataclass(frozen=True)
class SourceRecord:
    """One record of a dataset and where it came from."""

    data: Any
    """The parsed JSON value (usually an object; anything else is skipped by `load_dataset`)."""
    place: str
    """How messages name it: `row 7` (JSONL line), `record 3` (JSON array index), `Natural/3` (LLMBar)."""
    line: int
    """The JSONL line number, or the 1-based position in a JSON array or LLMBar subset."""
    source: str
    """The file's stem, or the LLMBar subset."""
    index: int
    """0-based position within its source."""
    broken: str = ""
    """Why the record could not even be parsed (a JSONL line that is not JSON); empty when it was."""


@dataclass(frozen=True)
class FieldMap:
    """Which JSON key holds each input of a record (the --*-field flags of `examiner judge` and
    `examiner meta`). The defaults are `examiner judge`'s; LLMBAR_FIELDS are `examiner meta`'s."""

    id: str = "id"
    instruction: str = "instruction"
    output: str = "output"
    """The single response (meta-evaluation: the text an individual item scores)."""
    output_1: str = "output_1"
    output_2: str = "output_2"
    reference: str = "reference"
    label: str = "label"
    """Gold preference 1 / 2 / 0 (tie), or another spelling of it."""
    human: str = "human_score"
    """Gold human score (meta-evaluation: an individual item's gold score)."""
    source: str = "source"
    group: str = "group"
    system: str = "system"


LLMBAR_FIELDS = FieldMap(instruction="input", output="text", human="score")
"""The keys of LLMBar's files (and `examiner meta`'s defaults)."""


@dataclass(frozen=True)
class Skipped:
    """A record that could not be used, with the offending field and a message naming both."""

    line: int
    field: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


class RowError(Exception):
    """Why one record cannot be used; `field` names the offending key ("-" for the record as a whole)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


SHIPPED_JSONL = {"summeval": ("summeval", SUMMEVAL_FILE)}
"""Dataset names (besides `llmbar:SUBSET`) and the JSONL file in the data folder each stands for."""


def read_records(spec: str, what: str = "dataset") -> list[SourceRecord]:
    """Every record of `llmbar:SUBSET[,SUBSET]`, a public set by name (`summeval`), a .json array file or a JSONL
    file, in order (a JSONL line that is not JSON comes back `broken`). UserError only when the file as a
    whole is unusable."""
    if spec.startswith("llmbar:"):
        names = [s for s in spec.removeprefix("llmbar:").split(",") if s]
        return [SourceRecord(r, f"{name}/{i}", i + 1, name, i) for name, i, r in llmbar_records(names)]
    if spec in SHIPPED_JSONL:
        return _jsonl_source_records(data_file(*SHIPPED_JSONL[spec]).read_text(encoding="utf-8"), spec)
    path = Path(spec)
    if not path.is_file():
        raise UserError(f"{what} {path} does not exist (or use llmbar:SUBSET or {', '.join(SHIPPED_JSONL)})")
    text = _dataset_text(path, what)
    if path.suffix == ".json":
        values, problem = _parse_json(text, outer=1)  # the array holding the records
        if problem:
            raise UserError(f"{path} is not valid JSON: {problem}")
        if not isinstance(values, list):
            raise UserError(f"{path} must hold a JSON array of records")
        return [SourceRecord(v, f"record {i}", i + 1, path.stem, i) for i, v in enumerate(values)]
    return _jsonl_source_records(text, path.stem)


def _jsonl_source_records(text: str, source: str) -> list[SourceRecord]:
    """One record per non-blank JSONL line; a line that is not JSON comes back `broken`."""
    records: list[SourceRecord] = []
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        data, broken = _parse_json(line)
        records.append(SourceRecord(data, f"row {line_no}", line_no, source, len(records), broken))
    return records


def _parse_json(text: str, outer: int = 0) -> tuple[Any, str]:
    """(value, "") or (None, why not) under the corpus reader's JSON limits: a record nested deeper than
    `--max-nesting-depth` is refused before Python's recursive parser meets it (`outer`: levels holding
    the records, 1 for a .json array)."""
    from examiner.corpus.reading import parse_json, reading_limits

    data, problem = parse_json(text, reading_limits().max_nesting_depth, outer)
    return data, problem.replace("invalid JSON (", "not valid JSON (").replace(" (--max-nesting-depth)", "")


def _dataset_text(path: Path, what: str) -> str:
    """A dataset file's text under the corpus reader's decoding policy: a binary file is refused with one
    line; text that is not UTF-8 (e.g. Latin-1) is read in its detected encoding, named in one warning."""
    try:
        decoded = decode_text(path.read_bytes())
    except OSError as exc:
        raise UserError(f"{what} {path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    if decoded.text is None:
        raise UserError(f"{what} {path} is a {decoded.binary}, not JSON or JSONL text")
    if decoded.encoding:
        log.warning("%s %s is not valid UTF-8: read as %s (detected)", what, path, decoded.encoding)
    return decoded.text


def load_dataset(spec: str, make: Callable[[SourceRecord], T], row_id: Callable[[T], str], *, id_field: str = "id",
                 limit: int | None = None, what: str = "dataset") -> tuple[list[T], list[Skipped]]:
    """Usable rows (`make` of each record) and the skipped records, in file order.

    `make` raises RowError for a record it cannot use; a row whose id repeats an earlier one is skipped
    too. `limit` keeps the first N records of the file, usable or not."""
    rows: list[T] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    for record in read_records(spec, what):
        if limit is not None and len(rows) + len(skipped) >= limit:
            break
        try:
            if record.broken:
                raise RowError("-", record.broken)
            if not isinstance(record.data, dict):
                raise RowError("-", "expected a JSON object")
            row = make(record)
        except RowError as exc:
            skipped.append(Skipped(record.line, exc.field, f"{record.place}: {exc}"))
            continue
        key = row_id(row)
        if key in seen:
            skipped.append(Skipped(record.line, id_field, f"{record.place}: duplicate id '{key}' in field '{id_field}'"))
            continue
        seen.add(key)
        rows.append(row)
    return rows, skipped


def field_text(obj: dict[str, Any], key: str, *, required: bool, allow_empty: bool = False) -> str | None:
    """The text under `key`; None when absent (or blank, unless `allow_empty`) and not required.

    RowError when a required field is missing or blank, or when the value is not text. A dotted key reads
    inside nested objects (examiner.corpus.record_fields)."""
    value = field_value(obj, key)
    if value is None:
        if required:
            raise RowError(key, f"missing field '{key}'")
        return None
    if not isinstance(value, str):
        raise RowError(key, f"field '{key}' must be text, got {type(value).__name__}")
    if not value.strip() and not allow_empty:
        if required:
            raise RowError(key, f"field '{key}' is empty")
        return None
    return value


def parse_preference(value: Any, key: str) -> Preference:
    """A gold (or imported) preference: 1, 2 or 0 (tie), or another input spelling of them; RowError otherwise."""
    try:
        return preference_from_text(value)
    except ValueError:
        raise RowError(key, f"field '{key}' must be 0, 1 or 2, got {value!r}") from None


def parse_number(value: Any, key: str, bounds: tuple[float, float] | None = None) -> float:
    """A finite number, within `bounds` when given; RowError otherwise."""
    if isinstance(value, bool):
        raise RowError(key, f"field '{key}' must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RowError(key, f"field '{key}' must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise RowError(key, f"field '{key}' must be a finite number, got {value!r}")
    if bounds is not None and not bounds[0] <= number <= bounds[1]:
        raise RowError(key, f"field '{key}' = {number:g} is outside {bounds[0]:g}-{bounds[1]:g}")
    return number
