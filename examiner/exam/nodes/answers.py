"""Node `collect_answers`: every pending question (or probe) goes to its target; the classic baselines
(BLEU, embedding similarity against the targets' reference texts) are scored on each answer."""

from __future__ import annotations

import asyncio
from typing import Any

from examiner.core.records import AnswerRecord, QuestionRecord
from examiner.exam.nodes.context import ExamContext, fan_out, stable_id, stop_update
from examiner.exam.state import ExamState
from examiner.stats.reference_metrics import bleu
from examiner.agents.candidate.answerer import answer as ask_candidate
from examiner.agents.candidate.confidence import stated_confidence, token_confidence


async def collect_answers(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Answers to the pending questions, written with their baseline scores; they wait for the judge."""
    questions = [ctx.store.get(QuestionRecord, qid) for qid in ctx.work(state, "pending")]
    label = "collect answers" if state.get("probes_done", 0) == 0 else "collect probe answers"
    summary = await fan_out(ctx, state, label, questions, lambda q: answer_one(ctx, q, state["round"]))
    answers = await asyncio.to_thread(score_classic, ctx, summary.values)
    ctx.store.append(answers)
    return {"pending": ctx.keep([]), "to_judge": ctx.keep([a.id for a in answers]),
            **stop_update(summary, "answering")}


async def answer_one(ctx: ExamContext, question: QuestionRecord, rnd: int) -> AnswerRecord:
    """The target's answer to one question."""
    result = await ask_candidate(
        ctx.gateway, question.text, target=question.target, round=rnd, unit_ids=question.targets,
        stage="answer" if question.kind != "probe" else "probe_answer", max_words=ctx.exam.answer_max_words,
        logprobs=ctx.exam.answer_logprobs,
    )
    text, stated = stated_confidence(result.text.strip())
    return AnswerRecord(id=stable_id("answer", question.id), question_id=question.id, round=rnd,
                        target=question.target, text=text, stated_confidence=stated,
                        token_confidence=token_confidence(result.logprobs))


def score_classic(ctx: ExamContext, answers: list[AnswerRecord]) -> list[AnswerRecord]:
    """BLEU and embedding similarity of each answer against its targets' reference texts."""
    if not answers:
        return answers
    references = [
        " ".join(ctx.units[uid].text for uid in ctx.store.get(QuestionRecord, a.question_id).targets)
        for a in answers
    ]
    texts = [a.text or " " for a in answers]
    bleu_scores = bleu(texts, references)
    similarity = (ctx.embedder.embed(texts) * ctx.embedder.embed(references)).sum(axis=1)
    return [
        a.model_copy(update={"bleu": float(b), "embedding_similarity": float(s)})
        for a, b, s in zip(answers, bleu_scores, similarity)
    ]
