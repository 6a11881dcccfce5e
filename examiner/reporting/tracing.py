"""`examiner trace RUN_DIR ID`: one unit or one question of a run, followed through its records.

For a unit: its text, its source passages (document, span, page when the passage has one), every question
that targeted it with the answer and the verdict on this unit, and people's overrides. For a question: the
question, the units it targeted (each with its sources), its answers and the verdict on every unit.

Why not the provenance graph: at 200,000 units it is not written (GRAPHML_MAX_NODES), and loading it
would hold the whole run in memory. The record files are streamed instead, one pass each, keeping only
the records that concern the id asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from examiner.core.records import AnswerRecord, QuestionRecord, UnitRecord, VerdictRecord, record_key
from examiner.core.rundir import RunDir
from examiner.core.errors import UserError
from examiner.reporting.summary import excerpt

R = TypeVar("R", bound=BaseModel)


def _matching(records: Iterable[R], keep: Callable[[R], bool]) -> dict[str, R]:
    """By id, the records whose last version (the one in force) `keep` accepts, in the order first matched.

    Only ids that matched once are followed, so memory grows with the matches, not with the file."""
    found: dict[str, R] = {}
    for record in records:
        key = record_key(record)
        if key in found or keep(record):
            found[key] = record
    return {key: record for key, record in found.items() if keep(record)}


def _sources(store: RunDir, units: Iterable[UnitRecord]) -> dict[str, list[dict[str, Any]]]:
    """Per unit id, its source spans with the span's text and page read from passages.jsonl when it has them."""
    units = list(units)
    wanted = {src.passage_id for unit in units for src in unit.sources}
    passages = {str(row["id"]): row for row in store.iter_passages() if str(row.get("id")) in wanted}
    out: dict[str, list[dict[str, Any]]] = {}
    for unit in units:
        rows = []
        for src in unit.sources:
            row: dict[str, Any] = {"document": src.document, "passage_id": src.passage_id, "start": src.start,
                                   "end": src.end, "page": None, "span_text": None}
            passage = passages.get(src.passage_id)
            if passage is not None:
                row["page"] = passage.get("page")
                offset = int(passage.get("start", 0))
                text = str(passage.get("text", ""))
                if 0 <= src.start - offset < src.end - offset <= len(text):
                    row["span_text"] = text[src.start - offset:src.end - offset]
            rows.append(row)
        out[unit.id] = rows
    return out


def trace_record(run_dir: str | Path, record_id: str) -> dict[str, Any]:
    """What the run holds about one unit or question id: {"kind": "unit"|"question", ...} (see the module).

    An id that is neither a unit nor a question of the run is a one-line UserError."""
    store = RunDir(run_dir)
    store.read_info()  # a one-line error when RUN_DIR is not a run directory
    units = _matching(store.iter_records(UnitRecord), lambda u: u.id == record_id)
    if units:
        questions = _matching(store.iter_records(QuestionRecord), lambda q: record_id in q.targets)
        verdicts = _matching(store.iter_records(VerdictRecord), lambda v: v.unit_id == record_id)
        unit_ids = {record_id}
        kind = "unit"
    else:
        questions = _matching(store.iter_records(QuestionRecord), lambda q: q.id == record_id)
        if not questions:
            raise UserError(f"no unit or question with id {record_id} in {store.path}")
        unit_ids = set(questions[record_id].targets)
        verdicts = _matching(store.iter_records(VerdictRecord), lambda v: v.question_id == record_id)
        unit_ids |= {v.unit_id for v in verdicts.values()}
        units = _matching(store.iter_records(UnitRecord), lambda u: u.id in unit_ids)
        kind = "question"
    answers = _matching(store.iter_records(AnswerRecord), lambda a: a.question_id in questions)
    overrides = [row for row in store.read_overrides() if row.question_id in questions and row.unit_id in unit_ids]
    return {"kind": kind, "id": record_id, "units": units, "sources": _sources(store, units.values()),
            "questions": questions, "answers": answers, "verdicts": verdicts, "overrides": overrides}


def _unit_lines(unit: UnitRecord, sources: list[dict[str, Any]], indent: str) -> list[str]:
    lines = [f"{indent}unit {unit.id}: {unit.text}"]
    for src in sources:
        page = f", page {src['page']}" if src["page"] is not None else ""
        span = f": {excerpt(src['span_text'], 200)}" if src["span_text"] else ""
        lines.append(f"{indent}  source {src['document']}{page}, chars {src['start']}-{src['end']} "
                     f"(passage {src['passage_id']}){span}")
    return lines


def trace_lines(found: dict[str, Any]) -> list[str]:
    """The trace as terminal lines: the unit(s) with sources, then per question its answers and verdicts."""
    lines: list[str] = []
    units, sources = found["units"], found["sources"]
    if found["kind"] == "unit":
        lines += _unit_lines(units[found["id"]], sources[found["id"]], "")
        if not found["questions"]:
            lines.append("no question targeted this unit")
    for q in found["questions"].values():
        lines.append(f"question {q.id} (round {q.round}, target {q.target}, {q.kind}, {q.qtype}, {q.status}): {q.text}")
        if found["kind"] == "question":
            for unit_id in q.targets:
                if unit_id in units:
                    lines += _unit_lines(units[unit_id], sources[unit_id], "  ")
                else:
                    lines.append(f"  unit {unit_id}: not in units.jsonl")
        answers = [a for a in found["answers"].values() if a.question_id == q.id]
        if not answers:
            lines.append("  no answer recorded")
        for a in answers:
            lines.append(f"  answer {a.id} ({a.target}): {excerpt(a.text)}")
            for v in found["verdicts"].values():
                if v.answer_id == a.id:
                    reason = f": {v.reason}" if v.reason else ""
                    lines.append(f"    verdict on {v.unit_id}: {v.verdict}{reason}")
        for o in found["overrides"]:
            if o.question_id == q.id:
                lines.append(f"  override on {o.unit_id}: {o.verdict_before} -> {o.verdict} by {o.who} at {o.at}: {o.reason}")
    return lines


__all__ = ["trace_record", "trace_lines"]
