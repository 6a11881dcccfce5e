"""Candidate role: the target model answers as an interviewee proving its knowledge."""

from __future__ import annotations

from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig
from examiner.agents.prompting import render


async def answer(
    gateway: Gateway,
    question: str,
    *,
    target: str,
    round: int,
    unit_ids: list[str],
    stage: str = "answer",
    max_words: int = 200,
) -> CallResult[str]:
    """The target endpoint's one-paragraph answer (tokens capped a little above the word limit)."""
    messages = render("exam_answer", question=question, max_words=max_words)
    return await gateway.chat(
        "candidate", messages, GenerationConfig(max_tokens=int(max_words * 1.6) + 16),
        CallContext(stage=stage, round=round, unit_ids=tuple(unit_ids)), endpoint=target,
    )
