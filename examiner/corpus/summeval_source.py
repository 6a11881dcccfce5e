"""SummEval's upstream file, BARTScore's `SUM/SummEval/data.pkl` (a Python pickle), turned into the JSONL the
loaders read, without running any code the pickle could carry.

Unpickling runs whatever callables a pickle names, so a pickle from the network is read in two guarded
steps: every opcode is checked against a list of those that only build dicts, lists, strings and numbers
(GLOBAL, REDUCE and the other code-running opcodes are refused with the byte they sit at), then the data
are loaded by an Unpickler that refuses every global anyway. The result must have SummEval's shape (articles
with their reference summaries and each system's summary and four mean scores) before one JSONL row per
(article, system) is written.
"""

from __future__ import annotations

import io
import json
import pickle
import pickletools
from typing import Any

from examiner.core.errors import UserError

ASPECTS = ("coherence", "consistency", "fluency", "relevance")
"""SummEval's four expert-scored aspects, in the order each row's `scores` lists them."""

MAX_PICKLE_BYTES = 16 * 2**20
"""The largest pickle read (the real one is 1,176,833 bytes)."""
MAX_JSONL_BYTES = 64 * 2**20
"""The largest JSONL written (the real one is 8,966,004 bytes); a pickle's shared references can make a
small file expand without bound."""

DATA_OPCODES = frozenset({
    "PROTO", "FRAME", "STOP", "MARK", "POP", "POP_MARK", "DUP",
    "EMPTY_DICT", "DICT", "SETITEM", "SETITEMS", "EMPTY_LIST", "LIST", "APPEND", "APPENDS",
    "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3",
    "UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8",
    "FLOAT", "BINFLOAT", "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4",
    "NONE", "NEWTRUE", "NEWFALSE",
    "PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE", "GET", "BINGET", "LONG_BINGET",
})
"""Opcodes that only build plain values; any other (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
EXT*, PERSID, buffers...) is refused before loading."""


class _DataOnly(pickle.Unpickler):
    """An Unpickler that resolves no global and no persistent id: nothing named in the file can be called."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"global {module}.{name} refused")

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("persistent id refused")


def _refuse(why: str) -> UserError:
    return UserError(f"SummEval pickle refused: {why}")


def load_data_pickle(data: bytes) -> Any:
    """The value a pickle of plain data holds (dicts, lists, tuples, strings, numbers, None, booleans);
    UserError naming the first opcode that could run code, or why the bytes are not such a pickle."""
    if len(data) > MAX_PICKLE_BYTES:
        raise _refuse(f"{len(data):,} bytes, more than the {MAX_PICKLE_BYTES:,} read")
    try:
        for opcode, _arg, pos in pickletools.genops(data):
            if opcode.name not in DATA_OPCODES:
                raise _refuse(f"it holds a {opcode.name} opcode at byte {pos}, which could run code "
                              "(only dicts, lists, strings and numbers are read)")
    except (ValueError, EOFError) as exc:
        raise _refuse(f"not a pickle ({exc})") from None
    try:
        return _DataOnly(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, ValueError, EOFError, IndexError, KeyError, TypeError) as exc:
        raise _refuse(f"cannot be read as data ({exc})") from None


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _refuse(f"{where} is a {type(value).__name__}, not text")
    return value


def _score(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _refuse(f"{where} is a {type(value).__name__}, not a number")
    return float(value)


def _mapping(value: Any, where: str) -> dict[Any, Any]:
    if not isinstance(value, dict) or not value:
        raise _refuse(f"{where} is not a non-empty dict")
    return value


def summeval_rows(data: bytes) -> list[dict[str, Any]]:
    """One row per (article, system) of SummEval's pickle, in the file's order, after checking its shape:
    {doc_id: {src, ref_summ, ref_summs: [str], sys_summs: {system_id: {sys_summ, scores: {aspect: number}}}}}."""
    rows: list[dict[str, Any]] = []
    for doc_id, doc in _mapping(load_data_pickle(data), "the pickle").items():
        where = f"document {doc_id!r}"
        doc = _mapping(doc, where)
        refs = doc.get("ref_summs")
        if not isinstance(refs, list) or not refs:
            raise _refuse(f"{where}: ref_summs is not a non-empty list")
        refs = [_text(r, f"{where}: a ref_summs entry") for r in refs]
        for system_id, summary in _mapping(doc.get("sys_summs"), f"{where}: sys_summs").items():
            at = f"{where}, system {system_id!r}"
            scores = _mapping(_mapping(summary, at).get("scores"), f"{at}: scores")
            if set(scores) != set(ASPECTS):
                raise _refuse(f"{at}: scores has {sorted(map(str, scores))}, not {list(ASPECTS)}")
            rows.append({
                "doc_id": _text(doc_id, "a document id"), "system_id": _text(system_id, f"{where}: a system id"),
                "source": _text(doc.get("src"), f"{where}: src"),
                "reference": _text(doc.get("ref_summ"), f"{where}: ref_summ"), "references": refs,
                "system_output": _text(summary.get("sys_summ"), f"{at}: sys_summ"),
                "scores": {a: _score(scores[a], f"{at}: the {a} score") for a in ASPECTS},
            })
    return rows


def summeval_jsonl(data: bytes) -> bytes:
    """SummEval's pickle as JSONL bytes: one row a line, keys doc_id, system_id, source, reference, references,
    system_output, scores (the file examiner's loaders read)."""
    out = io.BytesIO()
    for row in summeval_rows(data):
        text = len(row["source"]) + len(row["reference"]) + sum(map(len, row["references"])) + len(row["system_output"])
        if out.tell() + text > MAX_JSONL_BYTES:  # before serialising: one row may repeat a long text many times
            raise _refuse(f"it expands to more than {MAX_JSONL_BYTES:,} bytes of JSONL")
        out.write(json.dumps(row).encode("ascii") + b"\n")
    if out.tell() > MAX_JSONL_BYTES:
        raise _refuse(f"it expands to more than {MAX_JSONL_BYTES:,} bytes of JSONL")
    return out.getvalue()
