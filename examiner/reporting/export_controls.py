"""The control questions of a run (controls.jsonl) as exports carry them: marked as controls, never verdicts.

Why a module apart: the dataset rows, the Inspect log and the OpenTelemetry spans each show control
questions, and each must mark them the same way so no tool that reads an export counts them in accuracy.
A control has no right answer in the corpus, so its row has no `verdict` (and no judge or final label of
the exam's vocabulary); the judge's control label (declined_or_corrected, the right answer, or
accepted_premise) is in `control_label`, the kind and the unsupported premise beside it.
"""

from __future__ import annotations

from typing import Any

from examiner.core.control_records import ControlRecord
from examiner.reporting.controls import run_controls
from examiner.reporting.run_reader import RunData

CONTROL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("control", "bool"), ("control_kind", "string"), ("control_premise", "string"), ("control_label", "string"),
)
"""The control columns of an exported row: whether the row is a control question (false for every exam row),
its kind (false_premise, swapped_entity, out_of_corpus), the premise the corpus does not support, and the
judge's label of the answer (declined_or_corrected or accepted_premise; null when its reply did not parse)."""

CONTROL_QUESTION_KIND = "control"
"""The `question_kind` of a control question's row."""

CONTROL_SCORE = {"declined_or_corrected": 1.0, "accepted_premise": 0.0}
"""A control label as a score: 1 for the right answer to a question the corpus cannot answer."""

NOT_A_CONTROL: dict[str, Any] = {"control": False, "control_kind": None, "control_premise": None, "control_label": None}
"""The control columns of an exam row."""


def sorted_controls(run: RunData) -> list[ControlRecord]:
    """controls.jsonl's records in (target, round, id) order; none for a run without control questions."""
    return sorted(run_controls(run), key=lambda r: (r.target, r.round, r.id))


def control_columns(record: ControlRecord) -> dict[str, Any]:
    """One control's CONTROL_COLUMNS."""
    return {"control": True, "control_kind": record.kind, "control_premise": record.premise,
            "control_label": record.label}


def unlabelled_reason(record: ControlRecord) -> str | None:
    """Why a control has no label (None when it has one)."""
    return None if record.label is not None else "the judge's reply about the control did not parse"


__all__ = ["CONTROL_COLUMNS", "CONTROL_QUESTION_KIND", "CONTROL_SCORE", "NOT_A_CONTROL", "control_columns",
           "sorted_controls", "unlabelled_reason"]
