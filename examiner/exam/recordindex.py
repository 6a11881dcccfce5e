"""The running exam's index of one record type: id -> where the record's JSON line lies in its file.

A decoded pydantic record costs 1.3 to 2.1 KB of memory, its JSON 0.2 to 1 KB (measured on a 6,773-unit
run: a verdict 1,299 B against 234 B of JSON). A 200,000-unit exam writes about a million records, so
holding them decoded would take gigabytes, and even their JSON about half a gigabyte. The index keeps
only each record's span in its append-only file (offset and length: one int beside the id) and reads
the line back with `os.pread` when asked, which the page cache serves. Decoding costs 8 to 17
microseconds a record, so recently read records stay decoded in a small cache: a round reads the same
units and questions many times over, close together.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from examiner.core.jsonl import Span

M = TypeVar("M", bound=BaseModel)

DECODED_CACHE = 16_384
"""Decoded records kept per type (about 20-35 MB at the measured sizes)."""
_LENGTH_BITS = 32
"""A span is packed into one int: offset << 32 | length (a line is far below 4 GB)."""


class RecordIndex(Mapping[str, M], Generic[M]):
    """Records of one type by id, read from `path` (the type's append-only JSONL file) by their spans;
    the last span given for an id wins without moving it (as a dict assignment).

    Reading is thread-safe (nodes read from the event loop and from worker threads). Decoded records
    are shared between readers: treat them as read-only, as the exam's records always are.
    """

    def __init__(self, model: type[M], path: str | Path, cache_size: int = DECODED_CACHE) -> None:
        self.model = model
        self.path = Path(path)
        self._where: dict[str, int] = {}
        self._decoded: OrderedDict[str, M] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._fd: int | None = None

    def put_span(self, key: str, span: Span) -> None:
        """Index (or re-index) one record whose line the file holds at `span`."""
        offset, length = span
        with self._lock:
            self._where[key] = offset << _LENGTH_BITS | length
            self._decoded.pop(key, None)

    def put_spans(self, items: Iterable[tuple[str, Span]]) -> None:
        for key, span in items:
            self.put_span(key, span)

    def __getitem__(self, key: str) -> M:
        with self._lock:
            record = self._decoded.get(key)
            if record is not None:
                self._decoded.move_to_end(key)
                return record
            where = self._where[key]
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY)
            fd = self._fd
        raw = os.pread(fd, where & ((1 << _LENGTH_BITS) - 1), where >> _LENGTH_BITS)
        record = self.model.model_validate_json(raw)
        with self._lock:
            self._decoded[key] = record
            if len(self._decoded) > self._cache_size:
                self._decoded.popitem(last=False)
        return record

    def raw(self, key: str) -> bytes:
        """The JSON line of a record as its file holds it (without the newline); KeyError when absent."""
        with self._lock:
            where = self._where[key]
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY)
            fd = self._fd
        return os.pread(fd, where & ((1 << _LENGTH_BITS) - 1), where >> _LENGTH_BITS)

    def compact(self) -> None:
        """Rewrite the file with one line per id (the record the index holds, in index order), atomically
        (a kill leaves the old file or the new one), and index the new lines. Only for a writer that no
        other thread reads through meanwhile (the store calls it when it closes)."""
        temporary = self.path.with_name(self.path.name + ".tmp")
        spans: list[tuple[str, int]] = []
        offset = 0
        with temporary.open("wb") as out:
            for key in list(self._where):
                line = self.raw(key)
                out.write(line + b"\n")
                spans.append((key, offset << _LENGTH_BITS | len(line)))
                offset += len(line) + 1
            out.flush()
            os.fsync(out.fileno())
        temporary.replace(self.path)
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._where = dict(spans)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._where))

    def __len__(self) -> int:
        return len(self._where)

    def decoded(self) -> dict[str, M]:
        """Every record decoded, in a new dict (the caller's to change)."""
        return {key: self[key] for key in list(self._where)}

    def close(self) -> None:
        """Close the file (a later read opens it again)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._decoded.clear()


__all__ = ["DECODED_CACHE", "RecordIndex"]
