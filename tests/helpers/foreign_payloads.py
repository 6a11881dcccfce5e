"""Payloads an attacker plants in a run folder: each, if the file's reader built objects from it (unpickling,
a serializer that imports the callables it names, a YAML loader that honours python tags), would call
`os.system("touch MARKER")`. The tests plant them and check the marker never appears."""

from __future__ import annotations

import json
import os
import pickle
import shlex
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_POS_ARGS


def command(marker: Path) -> str:
    """The shell command every payload runs: it creates `marker`."""
    return f"touch {shlex.quote(str(marker))}"


class _System:
    """Pickles as a call of os.system (what `pickle.loads` runs)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (command(self.marker),)


def pickled(marker: Path) -> bytes:
    """A pickle whose loading runs the command."""
    return pickle.dumps(_System(marker))


def msgpack_call(marker: Path) -> ormsgpack.Ext:
    """LangGraph's msgpack extension for "construct module.name(*args)", naming os.system."""
    return ormsgpack.Ext(EXT_CONSTRUCTOR_POS_ARGS, ormsgpack.packb(["os", "system", [command(marker)]]))


def lc_constructor(marker: Path) -> dict[str, Any]:
    """The `lc` JSON constructor LangGraph's json format revives, naming os.system."""
    return {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": [command(marker)]}


def yaml_call(marker: Path) -> str:
    """A YAML document whose unsafe loading (yaml.load with the full or unsafe loader) runs the command."""
    return f"!!python/object/apply:os.system [{json.dumps(command(marker))}]\n"


def plant_in_checkpoints(path: Path, marker: Path, how: str) -> None:
    """Put a payload into the latest checkpoint of a LangGraph SQLite file: `msgpack` (the os.system
    extension inside the saved state), `json` (an lc constructor stored in the json format) or `pickle`
    (a pickle stored in the pickle format)."""
    with closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT rowid, checkpoint FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1").fetchone()
        rowid, blob = row
        if how == "msgpack":
            checkpoint = ormsgpack.unpackb(blob, option=ormsgpack.OPT_NON_STR_KEYS)
            checkpoint["channel_values"]["stop_reason"] = msgpack_call(marker)
            kind, data = "msgpack", ormsgpack.packb(checkpoint, option=ormsgpack.OPT_NON_STR_KEYS)
        elif how == "json":
            kind, data = "json", json.dumps(lc_constructor(marker)).encode()
        elif how == "pickle":
            kind, data = "pickle", pickled(marker)
        else:
            raise ValueError(how)
        db.execute("UPDATE checkpoints SET type = ?, checkpoint = ? WHERE rowid = ?", (kind, data, rowid))
        db.commit()


def plant_in_sqlite_values(path: Path, marker: Path) -> int:
    """Replace every BLOB or TEXT cell (but keys named *key*, *id*) of every table with a pickle of the
    payload; the number of cells replaced."""
    replaced = 0
    with closing(sqlite3.connect(path)) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")
                       if row[2].upper() in ("BLOB", "TEXT", "") and "key" not in row[1] and "id" not in row[1]]
            for column in columns:
                replaced += db.execute(f"UPDATE {table} SET {column} = ?", (pickled(marker),)).rowcount
        db.commit()
    return replaced


def plant_in_jsonl(path: Path, marker: Path) -> None:
    """Add two payload lines after the first line of a JSONL file: an lc constructor and a pickle."""
    lines = path.read_bytes().splitlines(keepends=True)
    payload = [json.dumps(lc_constructor(marker)).encode() + b"\n", pickled(marker).replace(b"\n", b" ") + b"\n"]
    path.write_bytes(b"".join(lines[:1] + payload + lines[1:]))
