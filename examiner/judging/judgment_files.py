"""Judgments made anywhere (by `examiner judge` or another tool), read back for their metrics: pairwise
verdicts or single scores, gold labels and a teacher's verdicts, each from a JSONL file whose keys
`JudgmentFields` names; then the judging report of them (what `examiner judge-stats` computes)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from examiner.core.errors import UserError

log = logging.getLogger(__name__)

_ORIGINAL = {"original", "forward", "ab", "0", "false", "1-2", "12"}
_SWAPPED = {"swapped", "swap", "reverse", "reversed", "ba", "1", "true", "2-1", "21"}

Notes = Callable[[str], None]
"""Where the lines for the person running it go (skipped rows)."""


@dataclass(frozen=True)
class JudgmentFields:
    """The keys of a judgments file, and how its grades read (the defaults are examiner judge's own)."""

    id_field: str = "id"
    order_field: str = "order"
    """original/swapped (also ab/ba, 0/1, false/true)."""
    verdict_field: str = "verdict"
    """0 tie, 1, 2; null = unparseable."""
    label_field: str = "label"
    score_fields: tuple[str, ...] = ("score_1", "score_2")
    """Pairwise grades in the order shown, used when a record has no verdict (two names)."""
    score_range: tuple[float, float] = (1.0, 10.0)
    """The valid grade range."""
    tie_threshold: float = 0.0
    verdict_in_shown_order: bool = False
    """Verdicts refer to the order shown (swapped ones are mapped back)."""
    score_field: str = "score"
    """Single scores: the judge's score; null = unparseable."""
    human_field: str = "human"
    group_field: str = "group"
    system_field: str = "system"


def read_judgments(path: str, fields: JudgmentFields, what: str = "judgments file",
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Normalised pairwise records (id, order, verdict in original labelling, label) and skipped rows."""
    from examiner.agents.parsing import verdict_from_scores
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset, parse_number, parse_preference
    from examiner.judging.pairwise import number

    names = list(fields.score_fields)
    if len(names) != 2:
        raise UserError(f"--score-fields expects two names, got '{','.join(names)}'")
    f = fields

    def record(source: SourceRecord) -> dict[str, Any]:
        obj = source.data
        if obj.get(f.id_field) is None:
            raise RowError(f.id_field, f"missing field '{f.id_field}'")
        order_raw = str(obj.get(f.order_field, "original")).strip().lower()
        if order_raw in _ORIGINAL:
            order = "original"
        elif order_raw in _SWAPPED:
            order = "swapped"
        else:
            raise RowError(f.order_field, f"field '{f.order_field}' must be original or swapped, got {order_raw!r}")
        if f.verdict_field in obj:
            value = obj[f.verdict_field]
            verdict = None if value is None else parse_preference(value, f.verdict_field)
            if verdict is not None and f.verdict_in_shown_order and order == "swapped":
                verdict = verdict.swapped()
        elif all(n in obj for n in names):
            if any(obj[n] is None for n in names):
                verdict = None
            else:
                s1, s2 = (parse_number(obj[n], n, f.score_range) for n in names)
                verdict = verdict_from_scores(s1, s2, f.tie_threshold)
                verdict = verdict.swapped() if order == "swapped" else verdict
        else:
            raise RowError(f.verdict_field, f"missing field '{f.verdict_field}' (and no {','.join(names)})")
        label = obj.get(f.label_field)
        label = parse_preference(label, f.label_field) if label is not None else None
        return {"id": str(obj[f.id_field]), "order": order, "verdict": number(verdict), "label": number(label),
                "failed": bool(obj.get("failed")), "panel": obj.get("panel")}

    # one pair has two records (one per order), so ids repeat: key rows by (id, order) instead
    records, skipped = load_dataset(path, record, lambda r: f"{r['id']}|{r['order']}", id_field=f.id_field,
                                    what=what)
    return records, [s.to_dict() for s in skipped]


def holds_single_scores(path: str, fields: JudgmentFields) -> bool:
    """True when no record carries a pairwise verdict (the verdict key, or both score keys) and some
    record carries the score key: the file holds single-score judgments (G-Eval, reference judge)."""
    from examiner.corpus.datasets import read_records

    reader_log = logging.getLogger("examiner.corpus.datasets")
    reader_log.disabled = True  # a decoding warning is given once, by the load that follows this look
    try:
        objects = [r.data for r in read_records(path, "judgments file") if isinstance(r.data, dict)]
    finally:
        reader_log.disabled = False
    names = list(fields.score_fields)
    pairwise = any(fields.verdict_field in o or all(n in o for n in names) for o in objects)
    return not pairwise and any(fields.score_field in o for o in objects)


def read_scores(path: str, fields: JudgmentFields, human: Mapping[str, float] | None = None,
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Normalised single-score records (id, score or None, human, group, system, failed; G-Eval's path and
    unparseable-sample count when present) and skipped rows. `human` (id -> score, from a labels file)
    replaces the records' own human scores. The human, group and system keys may be dotted
    (`scores.coherence`), read as `examiner judge` and `metric-stats` read them."""
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset, parse_number
    from examiner.corpus.record_fields import field_value

    f = fields

    def record(source: SourceRecord) -> dict[str, Any]:
        obj = source.data
        if obj.get(f.id_field) is None:
            raise RowError(f.id_field, f"missing field '{f.id_field}'")
        row_id = str(obj[f.id_field])
        if f.score_field not in obj:
            raise RowError(f.score_field, f"missing field '{f.score_field}'")
        score = obj[f.score_field]
        gold = human.get(row_id) if human is not None else field_value(obj, f.human_field)
        return {"id": row_id, "score": None if score is None else parse_number(score, f.score_field, f.score_range),
                "human": None if gold is None else parse_number(gold, f.human_field),
                "group": field_value(obj, f.group_field), "system": field_value(obj, f.system_field),
                "failed": bool(obj.get("failed")), "path": obj.get("path"),
                "n_unparseable": obj.get("n_unparseable")}

    records, skipped = load_dataset(path, record, lambda r: r["id"], id_field=f.id_field, what="judgments file")
    return records, [s.to_dict() for s in skipped]


def _by_id(path: str, fields: JudgmentFields, key: str, parse: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """id -> parse(value of `key`, which may be dotted) from a labels file, and its skipped rows (named as
    the labels')."""
    from examiner.corpus.datasets import RowError, SourceRecord, load_dataset
    from examiner.corpus.record_fields import field_value

    def label(source: SourceRecord) -> tuple[str, Any]:
        obj = source.data
        if obj.get(fields.id_field) is None:
            raise RowError(fields.id_field, f"missing field '{fields.id_field}'")
        value = field_value(obj, key)
        if value is None:
            raise RowError(key, f"missing field '{key}'")
        return str(obj[fields.id_field]), parse(value, key)

    labels, skipped = load_dataset(path, label, lambda pair: pair[0], id_field=fields.id_field, what="labels file")
    return dict(labels), [dict(s.to_dict(), message=f"labels {s.message}") for s in skipped]


def read_human_scores(path: str, fields: JudgmentFields) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """id -> human score from a labels file (its human key), for single-score judgments."""
    from examiner.corpus.datasets import parse_number

    return _by_id(path, fields, fields.human_field, parse_number)


def read_labels(path: str, fields: JudgmentFields) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """id -> gold preference from a labels file (its label key), for pairwise judgments."""
    from examiner.corpus.datasets import parse_preference

    return _by_id(path, fields, fields.label_field, parse_preference)


_Inputs = tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None, dict[Any, Any] | None]


def pairwise_inputs(judgments: str, fields: JudgmentFields, labels: str | None, teacher: str | None,
                    notes: Notes) -> _Inputs:
    """Pairwise judgments, skipped rows, gold labels (a labels file) and a teacher's verdicts."""
    records, skipped = read_judgments(judgments, fields)
    for s in skipped[:20]:
        notes(f"examiner: skipped {s['message']}")
    gold = None
    if labels:
        gold, bad = read_labels(labels, fields)
        skipped += bad
    taught = None
    if teacher:
        teacher_records, bad = read_judgments(teacher, fields, "teacher file")
        skipped += [dict(s, message=f"teacher {s['message']}") for s in bad]
        taught = {(r["id"], r["order"]): r["verdict"] for r in teacher_records if r["verdict"] is not None}
    return records, skipped, gold, taught


def single_inputs(judgments: str, fields: JudgmentFields, labels: str | None, teacher: str | None,
                  notes: Notes) -> _Inputs:
    """Single-score judgments (human scores from a labels file when given) and skipped rows."""
    if teacher:
        raise UserError("--teacher compares pairwise verdicts; this judgments file holds single scores")
    human, skipped = read_human_scores(labels, fields) if labels else (None, [])
    records, bad = read_scores(judgments, fields, human)
    for s in bad[:20]:
        notes(f"examiner: skipped {s['message']}")
    return records, bad + skipped, None, None


def judgments_report(judgments: str, fields: JudgmentFields, *, labels: str | None = None, teacher: str | None = None,
                     unparseable: Literal["drop", "wrong", "own-class"] = "drop", notes: Notes = log.warning) -> dict[str, Any]:
    """The judging report of a judgments file: agreement with gold labels (a labels file, or the labels in
    the judgments), swap consistency and bias, agreement with a teacher; correlations with human scores
    for single scores. Judgments without a usable verdict or score are dropped, counted as wrong or (pairwise)
    kept as a class of their own."""
    from examiner.judging.sections import build_report

    reader = single_inputs if holds_single_scores(judgments, fields) else pairwise_inputs
    records, skipped, gold, taught = reader(judgments, fields, labels, teacher, notes)
    if not records:
        raise UserError(f"no usable judgments in {judgments} ({len(skipped)} skipped)")
    return build_report("judge-stats", records, skipped, {"dataset": judgments}, labels=gold, teacher=taught,
                        unparseable=unparseable, lowest_score=fields.score_range[0])
