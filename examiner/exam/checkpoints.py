"""The exam's LangGraph checkpointer, reading back only what examiner itself writes there.

Why: a run folder travels (CI artifacts, shared drives), so its checkpoints.sqlite may have been written by
someone else. LangGraph's default serializer rebuilds any Python callable a checkpoint names (msgpack
extension types, `lc` JSON constructors) and, with its pickle fallback, unpickles; `examiner resume` on
such a folder would run the writer's code. The exam's graph state is plain data (examiner/exam/state.py:
TypedDicts of strings, numbers, lists and dicts), so the serializer here is LangGraph's in strict mode
with no type of examiner's added to its allow-list (only LangGraph's own safe built-ins, such as
datetime, are rebuilt), no pickle fallback, and only the value formats LangGraph writes for such state
(msgpack, bytes, null). A foreign object is never built: `checkpoint_problem` names it before a resume
opens the file (one UserError line), and should one get past that, loading it raises instead of
returning its raw payload into the state.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

OWN_TYPES: tuple[tuple[str, str], ...] = ()
"""(module, name) of the classes examiner stores in its graph state beyond LangGraph's safe built-ins:
none, since the state is plain data. A class added to ExamState must be named here to be read back."""

OWN_FORMATS = frozenset({"msgpack", "bytes", "bytearray", "null"})
"""The value formats LangGraph writes for examiner's state: never `json` (lc constructors) or `pickle`."""


class ForeignCheckpoint(ValueError):
    """A checkpoint value examiner did not write: a foreign format or a type outside the allow-list."""


class ExamSerializer(JsonPlusSerializer):
    """LangGraph's serializer, strict: only LangGraph's safe types and OWN_TYPES are rebuilt, nothing is
    unpickled, and a value naming anything else raises ForeignCheckpoint instead of loading."""

    def __init__(self) -> None:
        super().__init__(pickle_fallback=False, allowed_json_modules=None, allowed_msgpack_modules=OWN_TYPES)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind = data[0]
        if kind not in OWN_FORMATS:
            raise ForeignCheckpoint(f"a value in the {kind!r} format, which examiner never writes")
        refused: list[SerdeEvent] = []
        stop_listening = register_serde_event_listener(refused.append)
        try:
            value = super().loads_typed(data)
        finally:
            stop_listening()
        if refused:  # strict mode reports only refusals: the object was not built
            event = refused[0]
            name = ".".join(part for part in (event["module"], event["name"], event.get("method", "")) if part)
            raise ForeignCheckpoint(f"an object of type {name}, which examiner never writes")
        return value


@asynccontextmanager
async def exam_checkpointer(path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    """LangGraph's SQLite checkpointer at `path`, with ExamSerializer."""
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        saver.serde = ExamSerializer()
        yield saver


def checkpoint_problem(path: Path) -> str | None:
    """What in the checkpoints file at `path` examiner did not write (the first such value), or None.
    Every stored value is read with ExamSerializer; the file is opened read-only and a missing table (a
    file LangGraph has not set up yet) is not a problem. LangGraph's own warning about a blocked type is
    held back here: the caller's one line names it."""
    serializer = ExamSerializer()
    uri = f"{path.resolve().as_uri()}?mode=ro"
    serde_log = logging.getLogger(JsonPlusSerializer.__module__)
    quiet = _Silence()
    serde_log.addFilter(quiet)
    try:
        return _first_problem(uri, serializer)
    finally:
        serde_log.removeFilter(quiet)


class _Silence(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


def _first_problem(uri: str, serializer: ExamSerializer) -> str | None:
    with closing(sqlite3.connect(uri, uri=True)) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        queries = [(table, f"SELECT type, {column} FROM {table}") for table, column in
                   (("checkpoints", "checkpoint"), ("writes", "value")) if table in tables]
        for table, query in queries:
            for kind, blob in db.execute(query):
                problem = _value_problem(serializer.loads_typed, str(kind), blob)
                if problem is not None:
                    return f"its {table} table holds {problem}"
    return None


def _value_problem(load: Callable[[tuple[str, bytes]], Any], kind: str, blob: object) -> str | None:
    if blob is not None and not isinstance(blob, bytes):
        blob = str(blob).encode("utf-8")
    try:
        load((kind, blob or b""))
    except ForeignCheckpoint as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - undecodable bytes: damage, named like a foreign value
        return f"a value that cannot be decoded ({type(exc).__name__})"
    return None
