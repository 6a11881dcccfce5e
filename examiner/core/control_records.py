"""controls.jsonl: the exam's control questions (examiner/exam/nodes/controls.py) and how each target met them.

One record per (control question, target): the examiner's control (a question the corpus does not
support, the unsupported premise, its kind), the target's answer and the judge's label, declined_or_corrected
(the right answer) or accepted_premise. Kept in a file of their own so nothing that reads the exam's
questions, answers, verdicts or outcomes ever counts them in accuracy, outcomes or coverage; the report's
knowledge section reads them for the control refusal and false-premise acceptance rates.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

CONTROLS = "controls.jsonl"


class ControlRecord(BaseModel):
    """One target's answer to one control question, and the judge's label."""

    id: str
    cluster_id: str
    """The cluster whose units the control was written from (the report's intervals cluster by it)."""
    question_id: str
    """The exam's round-1 question of that cluster the control stands beside."""
    unit_ids: list[str]
    target: str
    round: int
    kind: Literal["false_premise", "swapped_entity", "out_of_corpus"]
    text: str
    premise: str
    answer: str = ""
    label: Literal["declined_or_corrected", "accepted_premise"] | None = None
    """The judge's label; None when its reply did not parse (left out of the rates)."""
    reason: str = ""


__all__ = ["CONTROLS", "ControlRecord"]
