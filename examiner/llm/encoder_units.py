"""The encoder judge for exam units: a fine-tuned cross-encoder that reads (knowledge unit, question,
answer) and gives a calibrated probability for each of the Ref-Eval judge's labels (correct, incorrect,
abstained, unrelated), so that the exam's judge cascade can name it as its cheap tier.

Why per unit: the Ref-Eval judge labels each unit of an answer on its own, so the student scores each
(unit, answer) input on its own; the order the prompt lists the units in cannot change a label. The
reference passage a unit came from is not in the judge's prompt, so the student does not read it either
(it learns from and answers the very prompt the strong judge gets). p(label) = softmax(logits / T), with T
fitted on a held-out split of the teacher's verdicts (temperature scaling).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from examiner.llm.encoder_cross import load_scorer

LABELS = ("correct", "incorrect", "abstained", "unrelated")
"""The Ref-Eval judge's labels, in the order of the student's outputs."""
UNIT_CONTEXT_TOKENS = 96
"""Tokens of (unit, question) kept in each input; the answer gets the rest."""
UNITS_TASK = "exam_units"
"""The `task` an exam-unit judge's encoder_judge.json names (a pairwise judge names none)."""

_QUESTION = re.compile(r"<exam_question>\n?(.*?)\n?</exam_question>", re.S)
_ANSWER = re.compile(r"<exam_answer>\n?(.*?)\n?</exam_answer>", re.S)
_UNIT = re.compile(r"^<(U\d+)>(.*)$", re.M)


def read_exam_prompt(text: str) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(question, answer, [(unit name, unit text)]) from examiner's Ref-Eval judge prompt, or None."""
    question, answer = _QUESTION.search(text), _ANSWER.search(text)
    if question is None or answer is None:
        return None
    tail = text[answer.end():]
    units = [(m.group(1), html.unescape(m.group(2))) for m in _UNIT.finditer(tail)]
    if not units:
        return None
    return html.unescape(question.group(1)), html.unescape(answer.group(1)), units


def unit_input(unit: str, question: str, answer: str) -> tuple[str, str]:
    """The cross-encoder input of one unit: (unit and question, answer)."""
    return f"{unit}\n{question}", answer


def labels_of_reply(reply: str) -> dict[str, str]:
    """The label per unit name of a Ref-Eval judge's JSON reply (a teacher's); {} when it is not one."""
    try:
        body = json.loads(reply)
    except ValueError:
        return {}
    labels = body.get("labels") if isinstance(body, dict) else None
    if not isinstance(labels, dict):
        return {}
    return {str(k): str(v) for k, v in labels.items() if v in LABELS}


class UnitJudge:
    """A trained exam-unit encoder judge loaded from its folder."""

    def __init__(self, folder: Path, info: dict[str, Any]) -> None:
        self.temperature = float(info["temperature"])
        self.scorer = load_scorer(folder, int(info["max_tokens"]), outputs=len(LABELS),
                                  instruction_tokens=int(info.get("context_tokens", UNIT_CONTEXT_TOKENS)))

    def probabilities(self, question: str, answer: str, units: Sequence[str]) -> list[dict[str, float]]:
        """Per unit, the calibrated probability of each label."""
        from scipy.special import softmax

        logits = unit_logits(self.scorer, [unit_input(u, question, answer) for u in units])
        return [dict(zip(LABELS, map(float, row))) for row in softmax(logits / self.temperature, axis=1)]


def unit_logits(scorer: Any, inputs: Sequence[tuple[str, str]], batch: int = 16) -> np.ndarray:
    """The raw label logits of each input, without gradients."""
    import torch

    out = np.zeros((len(inputs), len(LABELS)), dtype=np.float64)
    scorer.eval()
    with torch.no_grad():
        for start in range(0, len(inputs), batch):
            out[start:start + batch] = scorer(list(inputs[start:start + batch])).numpy()
    return out


def is_units_judge(info: dict[str, Any]) -> bool:
    """Whether an encoder_judge.json describes an exam-unit judge."""
    return info.get("task") == UNITS_TASK


__all__ = ["LABELS", "UNITS_TASK", "UNIT_CONTEXT_TOKENS", "UnitJudge", "is_units_judge", "labels_of_reply",
           "read_exam_prompt", "unit_input", "unit_logits"]
