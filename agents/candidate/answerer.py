"""Candidate role: the target model answers as an interviewee proving its knowledge."""

from __future__ import annotations

from dataclasses import replace

from examiner.agents.card import AgentCard, Prompt
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig


def answer_tokens(max_words: int) -> int:
    """max_tokens of an answer: a little above the word limit (about 1.6 tokens a word, and a margin)."""
    return int(max_words * 1.6) + 16


ANSWER = Prompt.of("exam_answer", "question", "max_words", generation=GenerationConfig(),
                   max_tokens=answer_tokens, sized_by="word limit")
CARD = AgentCard(agent="candidate", name="answerer", role="candidate", prompts=(ANSWER,),
                 text_reply="the answer as written, one paragraph, then a line `Confidence: N%`")


async def answer(
    gateway: Gateway,
    question: str,
    *,
    target: str,
    round: int,
    unit_ids: list[str],
    stage: str = "answer",
    max_words: int = 200,
    logprobs: bool = False,
) -> CallResult[str]:
    """The target endpoint's one-paragraph answer (tokens capped a little above the word limit), ending
    with its stated confidence; with `logprobs` the reply's token log-probabilities are asked for too."""
    config = replace(ANSWER.config(max_words), logprobs=True) if logprobs else ANSWER.config(max_words)
    return await gateway.chat(
        CARD.role, ANSWER.render(question=question, max_words=max_words), config,
        CallContext(stage=stage, round=round, unit_ids=tuple(unit_ids)), endpoint=target,
    )
