"""A teacher judge's verdicts as a training set for a distilled judge (`examiner distil`).

Why: JudgeLM shows a small model fine-tuned on a strong judge's verdicts agrees with it about as often
as people agree with each other. The examples are written in examiner's own judge prompts
(examiner/judging/distil.py), split by item or document so nothing leaks from train to validation.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from examiner.api.settings import path_text
from examiner.core.errors import UserError
from examiner.core.staging import staged_folder

TRAIN, VALIDATION, SUMMARY = "train.jsonl", "validation.jsonl", "distil.json"
SKIPPED_SHOWN = 20
"""Skipped rows named one by one (distil.json, the command's stderr); the rest are counted."""


class DistilOptions(BaseModel):
    """`examiner distil`: training and validation sets from a teacher judge's verdicts."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    out: str
    """A new (or empty) folder for train.jsonl, validation.jsonl and distil.json."""
    data: str | tuple[str, ...] | None = None
    """A pairwise dataset (.jsonl, .json, `llmbar:SUBSET`): instruction, output_1, output_2[, reference, label];
    or several, taught by their gold labels, each item's id then prefixed with its dataset (`llmbar:Natural:row1`)
    so that ids repeated across datasets stay distinct items."""
    judgments: str | None = None
    """The teacher's judgments of `data` (`examiner judge --method pairwise` output, matched by id); None:
    the dataset's gold labels are the teacher."""
    exam: str | None = None
    """An exam run folder: its judge's verdicts are the teacher (one example per judged answer)."""
    teacher: str | None = None
    """The teacher's name in the examples (default: the judgments file's, `gold`, or the run's judge)."""
    validation_share: float = Field(0.2, gt=0, lt=1)
    """Share of groups (pairwise: items; exam: source documents) held out for validation."""
    seed: int = 0
    """Seed of the split."""
    swap: bool = True
    """Add each example in the other order (pairwise: answers swapped; exam: units reversed)."""
    reference_drop: bool = True
    """Pairwise rows with a reference appear with and without it."""
    limit: int | None = Field(None, ge=1)
    """Use only the first N rows (of each dataset) or judged answers."""

    _paths = field_validator("out", "judgments", "exam", mode="before")(path_text)

    @field_validator("data", mode="before")
    @classmethod
    def _one_or_several(cls, value: Any) -> Any:
        if value is None or isinstance(value, (str, os.PathLike)):
            return path_text(value)
        several = tuple(path_text(v) for v in value)
        return several[0] if len(several) == 1 else several

    @model_validator(mode="after")
    def _one_source(self) -> "DistilOptions":
        if (self.data is None) == (self.exam is None):
            raise ValueError("name one source: a pairwise dataset (data) or an exam run (exam)")
        if self.judgments is not None and self.data is None:
            raise ValueError("judgments need the dataset they judged (data)")
        if self.judgments is not None and isinstance(self.data, tuple):
            raise ValueError("judgments match one dataset's ids: name one dataset with them")
        return self


@dataclass(frozen=True)
class DistilResult:
    """What was written: examples per split and kind, the groups on each side, and the files."""

    folder: Path
    train: int
    validation: int
    groups: dict[str, int]
    by_order: dict[str, int]
    teacher: str
    files: tuple[Path, ...]
    skipped: tuple[str, ...] = ()
    """Rows and judgments that could not be used, each with its file, line and why (a wrong type, a
    missing or unreadable label): reported, never dropped silently; distil.json counts them too."""


def distil(options: DistilOptions) -> DistilResult:
    """Write the training and validation sets; UserError for a source that cannot be used."""
    from examiner.judging.distil import split_of

    folder = Path(options.out)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(f"{folder} is not an empty folder (distil never writes over files)")
    skipped: list[str] = []
    examples, teacher = _pairwise(options, skipped) if options.data is not None else _exam(options)
    if not examples:
        why = f" ({len(skipped)} rows skipped, the first: {skipped[0]})" if skipped else ""
        raise UserError(f"the teacher judged nothing usable: no example to write{why}")
    sides: dict[str, list[dict[str, object]]] = {"train": [], "validation": []}
    groups: dict[str, set[str]] = {"train": set(), "validation": set()}
    for example in examples:
        side = split_of(example.group, options.validation_share, options.seed)
        sides[side].append(example.to_json(side))
        groups[side].add(example.group)
    by_order = dict(Counter(f"{e.kind}/{e.order}/{'ref' if e.reference else 'noref'}" for e in examples))
    summary = {"teacher": teacher, "source": _sources(options.data) if options.data else options.exam, "judgments": options.judgments,
               "validation_share": options.validation_share, "seed": options.seed, "swap": options.swap,
               "reference_drop": options.reference_drop, "examples": {k: len(v) for k, v in sides.items()},
               "groups": {k: len(v) for k, v in groups.items()}, "by_order": by_order,
               "split_by": "item" if options.data else "source document",
               "skipped": {"rows": len(skipped), "first": skipped[:SKIPPED_SHOWN]}}
    with staged_folder(folder) as staging:  # `out` holds the whole set or nothing: a killed distil does not block its retry
        for name, side in ((TRAIN, "train"), (VALIDATION, "validation")):
            (staging / name).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in sides[side]),
                                        encoding="utf-8")
        (staging / SUMMARY).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    files = [folder / TRAIN, folder / VALIDATION, folder / SUMMARY]
    return DistilResult(folder, len(sides["train"]), len(sides["validation"]),
                        {k: len(v) for k, v in groups.items()}, by_order, teacher, tuple(files), tuple(skipped))


def _pairwise(options: DistilOptions, skipped: list[str]) -> tuple[list, str]:  # type: ignore[type-arg]
    """The pairwise examples and the teacher's name; what could not be used is added to `skipped`."""
    from examiner.judging.distil import gold_teachings, judged_teachings, pairwise_examples

    assert options.data is not None
    sources = _sources(options.data)
    gold = options.judgments is None  # the dataset's labels teach: a row without a usable one is skipped
    if len(sources) > 1:
        examples, teacher = [], options.teacher or "gold"
        for spec in sources:
            rows = [replace(row, id=f"{spec}:{row.id}") for row in _rows(spec, options.limit, gold, skipped)]
            examples += [replace(e, meta={**e.meta, "dataset": spec}) for e in pairwise_examples(
                rows, gold_teachings(rows, teacher), swap=options.swap, reference_drop=options.reference_drop)]
        return examples, teacher
    rows = _rows(sources[0], options.limit, gold, skipped)
    if options.judgments is not None:
        teacher = options.teacher or Path(options.judgments).stem
        records = []
        for number, line in enumerate(Path(options.judgments).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{options.judgments}:{number}: not a JSON line ({exc.msg})") from None
            problem = judgment_problem(record)
            if problem is None:
                records.append(record)
            else:
                skipped.append(f"{options.judgments} line {number}: {problem}")
        teachings = judged_teachings(records, teacher)
    else:
        teacher = options.teacher or "gold"
        teachings = gold_teachings(rows, teacher)
    return pairwise_examples(rows, teachings, swap=options.swap, reference_drop=options.reference_drop), teacher


def _sources(data: str | tuple[str, ...]) -> tuple[str, ...]:
    return (data,) if isinstance(data, str) else data


def _rows(spec: str, limit: int | None, need_label: bool, skipped: list[str]) -> list[Any]:
    """The usable rows of one pairwise dataset, read as `examiner judge` reads it; each row it cannot use
    (a field of the wrong type, with `need_label` a missing or unreadable label) is added to `skipped`."""
    from examiner.corpus.datasets import LLMBAR_FIELDS, FieldMap
    from examiner.judging.dataset import Requirements, load_rows

    fields = LLMBAR_FIELDS if spec.startswith("llmbar:") else FieldMap()
    rows, unusable = load_rows(spec, fields, Requirements(("instruction", "output_1", "output_2"), need_label=need_label),
                               limit=limit)
    skipped += [f"{spec}: {row.message}" for row in unusable]
    return rows


def judgment_problem(record: Any) -> str | None:
    """Why a teacher's judgment record cannot be read (not an object, no id, grades that are not numbers,
    a verdict that is not text), or None; a record without grades or verdict is usable (not taught)."""
    if not isinstance(record, dict):
        return f"not a JSON object but {type(record).__name__}"
    if not isinstance(record.get("id"), (str, int)) or isinstance(record.get("id"), bool):
        return "no id (text or whole number)"
    for name in ("score_1", "score_2"):
        value = record.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            return f"{name} is not a number ({json.dumps(value)[:40]})"
    if record.get("verdict") is not None and not isinstance(record["verdict"], str):
        return f"verdict is not text ({json.dumps(record['verdict'])[:40]})"
    return None


def _exam(options: DistilOptions) -> tuple[list, str]:  # type: ignore[type-arg]
    from examiner.core.rundir import RunDir
    from examiner.core.passed_text import cut_passed, run_limit
    from examiner.judging.distil import JudgedAnswer, exam_examples

    assert options.exam is not None
    records = RunDir(options.exam).read()
    judge = str((records.config.get("roles") or {}).get("judge", "judge")) if isinstance(records.config, dict) else "judge"
    teacher = options.teacher or judge
    from examiner.core.cascade_records import CascadeRecord

    cheap = {r.id for r in RunDir(options.exam).records(CascadeRecord).values() if r.tier == "cheap"}
    by_answer: dict[str, list] = {}  # type: ignore[type-arg]
    for verdict in records.verdicts.values():
        # a cascade's cheap tier is not the teacher: only the strong judge's verdicts teach
        if verdict.verdict != "unscored" and verdict.mode == "refeval" and verdict.id not in cheap:
            by_answer.setdefault(verdict.answer_id, []).append(verdict)
    answers = []
    limit = run_limit(records.config)  # the student reads each answer as the teacher did: cut to the run's cap
    for answer_id, verdicts in sorted(by_answer.items()):
        answer = records.answers.get(answer_id)
        question = records.questions.get(verdicts[0].question_id)
        if answer is None or question is None:
            continue
        units = [(v.unit_id, records.units[v.unit_id].text) for v in verdicts if v.unit_id in records.units]
        if not units:
            continue
        first = records.units[units[0][0]]
        document = first.sources[0].document if first.sources else answer_id
        answers.append(JudgedAnswer(answer_id, question.text, cut_passed(answer.text, limit), units,
                                    {v.unit_id: v.verdict for v in verdicts}, {v.unit_id: v.reason for v in verdicts},
                                    document, _source_passages(records, [uid for uid, _ in units])))
        if options.limit is not None and len(answers) >= options.limit:
            break
    return exam_examples(answers, teacher, swap=options.swap), teacher



def _source_passages(records: Any, unit_ids: list[str]) -> dict[str, str] | None:
    """Each unit's first source passage by unit id, as the exam's cascade shows its cheap tier; None for a
    run that kept no passages (the examples then show the units alone)."""
    if not records.passages:
        return None
    out: dict[str, str] = {}
    for uid in unit_ids:
        sources = records.units[uid].sources
        row = records.passages.get(sources[0].passage_id) if sources else None
        if row is not None:
            out[uid] = str(row["text"])
    return out


__all__ = ["DistilOptions", "DistilResult", "SKIPPED_SHOWN", "distil", "judgment_problem"]
