"""Examiner role: one question per cluster of knowledge units, and narrower follow-up probes."""

from __future__ import annotations

from pydantic import BaseModel, Field

from examiner.llm import CallResult, Gateway
from examiner.prompting import render, unit_block


class Question(BaseModel):
    """The examiner's question and the ids of the units it asks about."""

    question: str = Field(description="the question put to the interviewee")
    target: list[str] = Field(description="ids of the knowledge units the question covers")


async def write_question(
    gateway: Gateway,
    units: list[tuple[str, str]],
    *,
    round: int,
    max_words: int = 50,
    feedback: str = "",
) -> CallResult[Question]:
    """Ask the examiner for one question over a cluster (`units[0]` is the cluster's center)."""
    note = f"\nYour previous attempt was rejected: {feedback}\n" if feedback else ""
    messages = render("exam_question", units=unit_block(units), max_words=max_words, feedback=note)
    return await gateway.chat(
        "examiner", messages, schema=Question, stage="question", round=round,
        unit_ids=[uid for uid, _ in units], max_tokens=200,
    )


async def write_probe(
    gateway: Gateway,
    question: str,
    answer: str,
    units: list[tuple[str, str]],
    *,
    round: int,
    max_words: int = 50,
) -> CallResult[Question]:
    """Ask for a narrower follow-up on the units an answer left uncovered."""
    messages = render(
        "exam_probe", question=question, answer=answer, units=unit_block(units), max_words=max_words
    )
    return await gateway.chat(
        "examiner", messages, schema=Question, stage="probe", round=round,
        unit_ids=[uid for uid, _ in units], max_tokens=200,
    )
