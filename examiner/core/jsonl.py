"""One JSONL policy for every append-only file a run writes (records, ledgers, assessments).

A killed writer can leave exactly one kind of damage: its last line cut short, without the newline that
ends every complete record. So:

- reading tolerates a torn last line and counts it (the run that resumes redoes that record);
- any other line that is not a valid record is corruption: a clear error naming the file and the line;
- before the first append to an existing file, a torn tail is cut off and kept in `<file>.torn`, so the
  next record starts on a line of its own and nothing is dropped silently.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ValidationError

from examiner.core.errors import UserError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class CorruptRunFile(UserError):
    """A line in the middle of a JSONL file is not a valid record."""

    line: int | None = None
    """The damaged line's number (from 1) when the damage is one line, so a caller can name it in its own words."""


@dataclass
class JsonlRead(Generic[T]):
    """The complete records of one file, and whether its last line was torn."""

    rows: list[T] = field(default_factory=list)
    torn_tail: bool = False


def _problem(path: Path, number: int, what: str) -> CorruptRunFile:
    problem = CorruptRunFile(f"{path}:{number}: not a valid record ({what}); the file is damaged "
                             "(a killed writer only tears the last line): move it aside to redo that part")
    problem.line = number
    return problem


@overload
def iter_jsonl(path: str | Path, parse: Callable[[str], T], on_torn: Callable[[], None] | None = None) -> Iterator[T]: ...


@overload
def iter_jsonl(path: str | Path, *, on_torn: Callable[[], None] | None = None) -> Iterator[Any]: ...


def iter_jsonl(path: str | Path, parse: Callable[[str], Any] = json.loads,
               on_torn: Callable[[], None] | None = None) -> Iterator[Any]:
    """The records of a JSONL file one at a time (memory stays flat however long the file), under the policy
    above: a torn last line is skipped and reported through `on_torn`; a missing file yields nothing.
    Lines end at b"\\n" only (a record's text may hold other line separators such as U+2028)."""
    for row, _ in iter_jsonl_spans(path, parse, on_torn):
        yield row


Span = tuple[int, int]
"""(byte offset, byte length) of one line in its file, without the newline: what `os.pread` reads back."""


@overload
def iter_jsonl_spans(path: str | Path, parse: Callable[[str], T],
                     on_torn: Callable[[], None] | None = None) -> Iterator[tuple[T, Span]]: ...


@overload
def iter_jsonl_spans(path: str | Path, *, on_torn: Callable[[], None] | None = None) -> Iterator[tuple[Any, Span]]: ...


def iter_jsonl_spans(path: str | Path, parse: Callable[[str], Any] = json.loads,
                     on_torn: Callable[[], None] | None = None) -> Iterator[tuple[Any, Span]]:
    """`iter_jsonl`, each record with the span of its line (for indexes that read records back from disk)."""
    file = Path(path)
    if not file.is_file():
        return
    offset = 0
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            start, offset = offset, offset + len(raw)
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            try:
                row = parse(line)
            except (ValueError, ValidationError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
                if not raw.endswith(b"\n"):  # only the last line can lack it: cut short by a kill
                    if on_torn is not None:
                        on_torn()
                    return
                raise _problem(file, number, _first_line(exc)) from None
            yield row, (start, len(raw.rstrip(b"\n")))


@overload
def read_jsonl(path: str | Path, parse: Callable[[str], T]) -> JsonlRead[T]: ...


@overload
def read_jsonl(path: str | Path) -> JsonlRead[Any]: ...


def read_jsonl(path: str | Path, parse: Callable[[str], Any] = json.loads) -> JsonlRead[Any]:
    """Every record of a JSONL file, parsed by `parse` (JSON values when none is given), under the policy
    above (missing file: empty)."""
    result: JsonlRead[Any] = JsonlRead()

    def torn() -> None:
        result.torn_tail = True

    result.rows = list(iter_jsonl(path, parse, torn))
    return result


def read_models(
    path: str | Path, model: type[M], key: Callable[[M], str], torn: dict[str, int] | None = None
) -> dict[str, M]:
    """The last record per key of a JSONL file of `model` records; a torn last line is counted in `torn`."""
    read = read_jsonl(path, model.model_validate_json)
    if read.torn_tail and torn is not None:
        name = Path(path).name
        torn[name] = torn.get(name, 0) + 1
    records: dict[str, M] = {}
    for record in read.rows:
        k = key(record)
        records.pop(k, None)  # re-insert so dict order follows the last write
        records[k] = record
    return records


def repair_tail(path: str | Path) -> str | None:
    """Cut a torn last line off `path` and keep it in `<path>.torn`; returns the fragment, if any.

    A last line that lacks only its newline is a whole record (a JSON object is never valid before its
    closing brace): it is kept and terminated instead, so no complete record leaves the file.
    """
    file = Path(path)
    if not file.is_file() or file.stat().st_size == 0:
        return None
    with file.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return None
        data = file.read_bytes()
        cut = data.rfind(b"\n") + 1
        fragment = data[cut:]
        if _is_json(fragment):
            handle.seek(0, os.SEEK_END)
            handle.write(b"\n")
            return None
        with file.with_name(file.name + ".torn").open("ab") as kept:
            kept.write(fragment + b"\n")
        handle.truncate(cut)
    return fragment.decode("utf-8", errors="replace")


def append_jsonl(path: str | Path, rows: Iterable[str]) -> list[Span]:
    """Append already-serialised records, one per line (the caller repairs the tail once beforehand);
    the span of each line written, in order."""
    spans: list[Span] = []
    with Path(path).open("ab") as handle:
        offset = handle.seek(0, os.SEEK_END)
        for row in rows:
            data = row.encode("utf-8")
            handle.write(data + b"\n")
            spans.append((offset, len(data)))
            offset += len(data) + 1
    return spans


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth_exceeds(text: str, limit: int) -> bool:
    """Whether JSON `text` nests arrays and objects more than `limit` deep, found in one linear pass without
    recursion: Python's json parser recurses, so a record nested 200,000 deep would raise RecursionError
    instead of being refused with a reason. Text with fewer brackets than `limit` is not scanned at all."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for bracket in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        if bracket.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:160] if text else type(exc).__name__


__all__ = ["CorruptRunFile", "JsonlRead", "Span", "append_jsonl", "iter_jsonl", "iter_jsonl_spans",
           "nesting_depth_exceeds", "read_jsonl", "read_models", "repair_tail"]
