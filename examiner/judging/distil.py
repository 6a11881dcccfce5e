"""Training data for a distilled judge (JudgeLM, Zhu et al. 2023): a teacher's verdicts turned into chat
examples in the very prompts examiner judges with, so that a model fine-tuned on them can be named as a
judge endpoint and read by the same parsers.

Two sources:
- pairwise: a dataset of (instruction, answer 1, answer 2[, reference]) rows with the teacher's judgments
  (`examiner judge --method pairwise` output: grades and reason) or, without judgments, its gold labels.
  JudgeLM's augmentations: swap (the same pair in the other order, grades swapped and the reason's
  "answer 1" / "answer 2" exchanged) and reference drop (a row with a reference appears with and without
  it, so the judge works either way).
- exam: a run's verdicts, one example per judged answer: the Ref-Eval judge's prompt over the answer's
  target units, the teacher's label map (and reasons) as the reply; the swap analogue shows the units in
  reverse order. There is no reference to drop: the units are what the judge checks against. Where the run
  holds its passages, each unit's source passage stands below the units (the prompt a judge cascade sends
  its cheap tier with `cheap_passages`), so a student can read what the unit came from.

The split into train and validation is by group (a pair's item id; an answer's source document), drawn by
a seeded hash, so no item or document is on both sides.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from examiner.agents.aliases import UnitAliases
from examiner.agents.judge.pairwise_judge import pairwise_messages
from examiner.agents.judge.unit_judge import judge_messages
from examiner.core.labels import Preference, preference_from_text
from examiner.judging.dataset import Row

Split = Literal["train", "validation"]
GOLD_GRADES = {Preference.FIRST: (8, 3), Preference.SECOND: (3, 8), Preference.TIE: (6, 6)}
"""Grades written for a gold label that comes without grades (a dataset's label as the teacher)."""


@dataclass(frozen=True)
class Example:
    """One chat example: the judge's prompt and the teacher's reply, with where it came from."""

    messages: list[dict[str, str]]
    kind: Literal["pairwise", "exam"]
    group: str
    order: Literal["original", "swapped"]
    reference: bool
    teacher: str
    label: str
    source_id: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self, split: Split) -> dict[str, Any]:
        return {"messages": self.messages, "kind": self.kind, "split": split, "group": self.group,
                "order": self.order, "reference": self.reference, "teacher": self.teacher, "label": self.label,
                "source_id": self.source_id, **({"meta": self.meta} if self.meta else {})}


def split_of(group: str, validation_share: float, seed: int) -> Split:
    """Seeded hash of the group: the same group always lands on the same side."""
    digest = hashlib.sha256(f"distil:{seed}:{group}".encode()).digest()
    return "validation" if int.from_bytes(digest[:8], "big") / 2**64 < validation_share else "train"


_ANSWER_NAMES = re.compile(r"\b(answer|assistant|response)(\s*)([12])\b", re.I)
_ORDINALS = re.compile(r"\b(first|second)(\s+)(answer|response)\b", re.I)


def swap_reason(reason: str) -> str:
    """The reason as it reads with the answers shown the other way round ("answer 1" <-> "answer 2",
    "first answer" <-> "second answer")."""
    text = _ANSWER_NAMES.sub(lambda m: f"{m.group(1)}{m.group(2)}{3 - int(m.group(3))}", reason)
    return _ORDINALS.sub(lambda m: f"{_other_ordinal(m.group(1))}{m.group(2)}{m.group(3)}", text)


def _other_ordinal(word: str) -> str:
    other = "second" if word.lower() == "first" else "first"
    return other.capitalize() if word[0].isupper() else other


def pairwise_reply(score_1: float, score_2: float, reason: str) -> str:
    """The reply in the grade-line format the pairwise judge parses (agents/parsing.parse_score_line)."""
    line = f"{score_1:g} {score_2:g}"
    return f"{line}\n{reason.strip()}" if reason.strip() else line


@dataclass(frozen=True)
class Teaching:
    """The teacher's judgment of one pair, in the original order."""

    score_1: float
    score_2: float
    reason: str
    label: Preference
    teacher: str


def pairwise_examples(rows: Iterable[Row], teachings: dict[str, Teaching], *, swap: bool = True,
                      reference_drop: bool = True) -> list[Example]:
    """JudgeLM-style examples of every row the teacher judged: original order, swapped, each with and
    without the row's reference when it has one."""
    out: list[Example] = []
    for row in rows:
        taught = teachings.get(row.id)
        if taught is None:
            continue
        references = [row.reference] if row.reference else [None]
        if row.reference and reference_drop:
            references.append(None)
        orders: list[tuple[Literal["original", "swapped"], str, str, float, float, str]] = [
            ("original", row.output_1, row.output_2, taught.score_1, taught.score_2, taught.reason)]
        if swap:
            orders.append(("swapped", row.output_2, row.output_1, taught.score_2, taught.score_1,
                           swap_reason(taught.reason)))
        # the pair in its original order, for a student that reads the texts rather than the prompt (the encoder)
        pair = {"instruction": row.instruction, "output_1": row.output_1, "output_2": row.output_2}
        for reference in references:
            for order, first, second, s1, s2, reason in orders:
                messages = [{"role": m["role"], "content": m["content"]}
                            for m in pairwise_messages(row.instruction, first, second, reference)]
                messages.append({"role": "assistant", "content": pairwise_reply(s1, s2, reason)})
                label = taught.label.swapped() if order == "swapped" else taught.label
                out.append(Example(messages, "pairwise", row.id, order, reference is not None, taught.teacher,
                                   label.value, row.id, {"pair": pair}))
    return out


def gold_teachings(rows: Iterable[Row], teacher: str = "gold") -> dict[str, Teaching]:
    """A dataset's own labels as the teacher (grades from GOLD_GRADES, no reason)."""
    out = {}
    for row in rows:
        if row.label is not None:
            s1, s2 = GOLD_GRADES[row.label]
            out[row.id] = Teaching(s1, s2, "", row.label, teacher)
    return out


def judged_teachings(records: Iterable[dict[str, Any]], teacher: str) -> dict[str, Teaching]:
    """The teacher's original-order judgments (judgments.jsonl of `examiner judge --method pairwise`) that
    carry grades; a pair judged only in swapped order is read back into the original order."""
    out: dict[str, Teaching] = {}
    for record in records:
        s1, s2, verdict = record.get("score_1"), record.get("score_2"), record.get("verdict")
        if s1 is None or s2 is None or verdict is None:
            continue
        swapped = record.get("order") == "swapped"
        if swapped and str(record["id"]) in out:
            continue
        reason = str(record.get("reason") or "")
        label = preference_from_text(verdict)
        if swapped:  # grades and reason were given in the shown (swapped) order
            s1, s2, reason = s2, s1, swap_reason(reason)
        out[str(record["id"])] = Teaching(float(s1), float(s2), reason, label, teacher)
    return out


@dataclass(frozen=True)
class JudgedAnswer:
    """One answer of an exam with the teacher's label (and reason) for each of its target units."""

    answer_id: str
    question: str
    answer: str
    units: Sequence[tuple[str, str]]
    labels: dict[str, str]
    reasons: dict[str, str]
    group: str
    passages: Mapping[str, str] | None = None
    """Each unit's source passage by unit id (the run's passages.jsonl): the example then shows them
    below the units (the cheap tier's prompt with `cheap_passages`); None: the strong judge's prompt."""


def exam_reply(aliases: UnitAliases, units: Sequence[tuple[str, str]], labels: dict[str, str],
               reasons: dict[str, str]) -> str:
    """The reply in the Ref-Eval judge's JSON (agents/judge/unit_judge.Judgment), by the call's unit names."""
    names = dict(zip(aliases.ids, aliases.names))
    body = {"labels": {names[uid]: labels[uid] for uid, _ in units},
            "reasons": [{"unit": names[uid], "reason": reasons[uid]} for uid, _ in units
                        if labels[uid] == "incorrect" and reasons.get(uid)]}
    return json.dumps(body, ensure_ascii=False)


def exam_examples(answers: Iterable[JudgedAnswer], teacher: str, *, swap: bool = True) -> list[Example]:
    """One example per answer (and one with its units reversed when `swap`)."""
    out: list[Example] = []
    for judged in answers:
        orders: list[tuple[Literal["original", "swapped"], Sequence[tuple[str, str]]]] = [("original", judged.units)]
        if swap and len(judged.units) > 1:
            orders.append(("swapped", list(reversed(judged.units))))
        for order, units in orders:
            rendered, aliases = judge_messages(judged.question, judged.answer, list(units), judged.passages)
            messages = [{"role": m["role"], "content": m["content"]} for m in rendered]
            messages.append({"role": "assistant", "content": exam_reply(aliases, units, judged.labels, judged.reasons)})
            label = ",".join(judged.labels[uid] for uid, _ in judged.units)
            out.append(Example(messages, "exam", judged.group, order, True, teacher, label, judged.answer_id))
    return out


__all__ = ["Example", "GOLD_GRADES", "JudgedAnswer", "Teaching", "exam_examples", "exam_reply", "gold_teachings",
           "judged_teachings", "pairwise_examples", "pairwise_reply", "split_of", "swap_reason"]
