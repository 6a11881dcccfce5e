"""The encoder judge for exam units: a fine-tuned cross-encoder that reads (knowledge unit, reference
passage, question, answer) and gives a calibrated probability for each of the Ref-Eval judge's labels
(correct, incorrect, abstained, unrelated), so that the exam's judge cascade can name it as its cheap tier.

Why per unit: the Ref-Eval judge labels each unit of an answer on its own, so the student scores each
(unit, answer) input on its own; the order the prompt lists the units in cannot change a label. Why the
passage: a unit is one sentence cut from its passage, and the passage says what it is about (which pump,
which year); the judge's prompt that a cascade sends its cheap tier with `cheap_passages`
(prompts/exam_judge_passages.md) and `examiner distil --exam` both carry it, so the student learns from
and answers the same input. Each input's first segment is the unit whole, the passage clipped to what is
left of `context_tokens`, then the question; the answer is the second segment. A judge taught before
passages were shown (its encoder_judge.json names no `passages`) reads (unit, question, answer) as it was
taught. p(label) = softmax(logits / T), with T fitted on a held-out split of the teacher's verdicts
(temperature scaling)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from examiner.llm.encoder_cross import load_scorer

LABELS = ("correct", "incorrect", "abstained", "unrelated")
"""The Ref-Eval judge's labels, in the order of the student's outputs."""
UNIT_CONTEXT_TOKENS = 96
"""Tokens of (unit, question) kept in each input of a judge without passages; the answer gets the rest."""
PASSAGE_CONTEXT_TOKENS = 160
"""Tokens of (unit, passage, question) kept in each input of a judge that reads passages: a harbor-water
unit and question take about 60, so the passage keeps about 100 (most of its ~80-token passages whole)
and the answer the other 93 of the 256."""
UNITS_TASK = "exam_units"
"""The `task` an exam-unit judge's encoder_judge.json names (a pairwise judge names none)."""

_QUESTION = re.compile(r"<exam_question>\n?(.*?)\n?</exam_question>", re.S)
_ANSWER = re.compile(r"<exam_answer>\n?(.*?)\n?</exam_answer>", re.S)
_PASSAGES = re.compile(r"^<exam_passages>\n(.*?)^</exam_passages>$", re.S | re.M)
_UNIT = re.compile(r"^<(U\d+)>(.*)$", re.M)
_SOURCE = re.compile(r"^<S(\d+)>(.*)$", re.M)


@dataclass(frozen=True)
class ExamPrompt:
    """What a Ref-Eval judge prompt holds for the student."""

    question: str
    answer: str
    units: list[tuple[str, str]]
    """(unit name, unit text), in the prompt's order."""
    passages: dict[str, str] | None
    """Source passage by unit name (prompts/exam_judge_passages.md); None: the prompt shows none."""


def read_exam_prompt(text: str) -> ExamPrompt | None:
    """The question, answer, units and (when shown) source passages of examiner's Ref-Eval judge prompt,
    or None. Every value was escaped when the prompt was written (agents/prompting/fence.py), so no
    question, answer, unit or passage text holds a `<` that could open, close or name a block: the unit
    lines are read after the answer's fence, the passage lines only inside the one `<exam_passages>`
    block that starts and ends on lines of its own."""
    question, answer = _QUESTION.search(text), _ANSWER.search(text)
    if question is None or answer is None:
        return None
    tail = text[answer.end():]
    block = _PASSAGES.search(tail)
    units = [(m.group(1), html.unescape(m.group(2))) for m in _UNIT.finditer(tail[:block.start()] if block else tail)]
    if not units:
        return None
    passages = None if block is None else {
        f"U{m.group(1)}": html.unescape(m.group(2)) for m in _SOURCE.finditer(block.group(1))}
    return ExamPrompt(html.unescape(question.group(1)), html.unescape(answer.group(1)), units, passages)


def unit_input(unit: str, question: str, answer: str, passage: str | None = None, *, tokenizer: Any = None,
               context_tokens: int = PASSAGE_CONTEXT_TOKENS) -> tuple[str, str]:
    """The cross-encoder input of one unit: (unit, passage and question, answer); without a passage
    (None) the input of a judge taught without passages, (unit and question, answer). The passage keeps
    its beginning, clipped by `tokenizer` so that unit, passage and question fit `context_tokens`
    (encoder_cross.clipped_inputs then cuts nothing of the unit)."""
    if passage is None:
        return f"{unit}\n{question}", answer
    return f"{unit}\n{clip_passage(tokenizer, passage, unit, question, context_tokens)}\n{question}", answer


def clip_passage(tokenizer: Any, passage: str, unit: str, question: str, context_tokens: int) -> str:
    """The beginning of `passage` that fits beside the whole unit and question in `context_tokens`
    (at a token boundary, read from the fast tokenizer's character offsets); "" when nothing fits."""
    taken = len(tokenizer(f"{unit}\n{question}", add_special_tokens=False)["input_ids"])
    room = context_tokens - taken
    if room <= 0 or not passage:
        return ""
    offsets = tokenizer(passage, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    return passage if len(offsets) <= room else passage[:offsets[room - 1][1]]


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
        self.reads_passages = bool(info.get("passages", False))
        """Taught on (unit, passage, question, answer): it needs the prompt with passages."""
        self.context_tokens = int(info.get("context_tokens", UNIT_CONTEXT_TOKENS))
        self.scorer = load_scorer(folder, int(info["max_tokens"]), outputs=len(LABELS),
                                  instruction_tokens=self.context_tokens)

    def inputs(self, question: str, answer: str, units: Sequence[str],
               passages: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """The cross-encoder input of each unit, with its passage (one per unit) when the judge reads them."""
        if not self.reads_passages:
            return [unit_input(u, question, answer) for u in units]
        if passages is None or len(passages) != len(units):
            raise ValueError("this encoder judge reads each unit's source passage: give one per unit")
        return [unit_input(u, question, answer, p, tokenizer=self.scorer.tokenizer, context_tokens=self.context_tokens)
                for u, p in zip(units, passages)]

    def probabilities(self, question: str, answer: str, units: Sequence[str],
                      passages: Sequence[str] | None = None) -> list[dict[str, float]]:
        """Per unit, the calibrated probability of each label."""
        from scipy.special import softmax

        logits = unit_logits(self.scorer, self.inputs(question, answer, units, passages))
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


__all__ = ["ExamPrompt", "LABELS", "PASSAGE_CONTEXT_TOKENS", "UNITS_TASK", "UNIT_CONTEXT_TOKENS", "UnitJudge",
           "clip_passage", "is_units_judge", "labels_of_reply", "read_exam_prompt", "unit_input", "unit_logits"]
