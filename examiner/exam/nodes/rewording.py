"""Node `rewording`: a seeded share of round 1's questions asked again in other words (the wording check).

Why: a question written by a model is one wording among many, and a target may answer one wording of the
same question better than another; with `exam.paraphrases` K above 0, the examiner rewrites a seeded share
`exam.paraphrase_share` of round 1's questions (questions are shared by every target) in K wordings, every
target answers each wording and the run's judge marks it against the question's units. Each answer's labels
go to rewording.jsonl (wording 0 is the question as the exam asked it, its labels the exam's verdicts), and
examiner.stats.wording splits the variance of a question's accuracy into cluster, wording and judge parts.
Nothing here is counted in accuracy or outcomes: the node runs after the exam's rounds and writes nothing
they read. Every call is recorded under the ledger stage `rewording`. A resumed run skips the questions
whose wordings are all on disk, and the cache answers the calls a killed run had made.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from examiner.agents.candidate.answerer import answer as ask_candidate
from examiner.agents.candidate.confidence import stated_confidence
from examiner.agents.examiner.paraphraser import REWORDING_STAGE, paraphrase
from examiner.core.contract import ExamTask
from examiner.core.records import QuestionRecord, VerdictRecord, WordingRecord
from examiner.exam.nodes.context import ExamContext, fan_out, running, stable_id, stop_update
from examiner.exam.nodes.judge_units import NO_MARK
from examiner.exam.nodes.self_check import sample_size
from examiner.exam.state import ExamState
from examiner.llm import Unparseable
from examiner.llm.gateway import ledger_stage

MIN_QUESTIONS = 2
"""Fewest questions re-asked when that many exist: one question gives no spread between questions."""


def asked_questions(questions: Iterable[QuestionRecord]) -> dict[str, list[QuestionRecord]]:
    """Round 1's asked questions (each target's copy) by cluster, in target order."""
    found: dict[str, list[QuestionRecord]] = defaultdict(list)
    for q in questions:
        if q.kind == "question" and q.round == 1 and q.status == "ok" and q.target and q.targets:
            found[q.cluster_id].append(q)
    return {cid: sorted(qs, key=lambda q: q.target) for cid, qs in found.items()}


def choose_clusters(cluster_ids: Iterable[str], share: float, seed: int) -> list[str]:
    """A seeded share of the clusters (ranked by a hash of seed and id: the same ones on a resume)."""
    ids = sorted(cluster_ids)
    n = sample_size(len(ids), share, MIN_QUESTIONS)
    return sorted(ids, key=lambda cid: stable_id(REWORDING_STAGE, seed, cid))[:n]


def wording_id(question_id: str, wording: int) -> str:
    return stable_id(REWORDING_STAGE, question_id, wording)


async def rewording(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Re-ask the chosen questions in K wordings (skipping those a killed run finished)."""
    k = ctx.exam.paraphrases
    if k <= 0 or not running(state) or not ctx.mode.reads_references:
        return {}
    by_cluster = asked_questions(ctx.store.index(QuestionRecord).values())
    done = ctx.store.index(WordingRecord)
    todo = [by_cluster[cid] for cid in choose_clusters(by_cluster, ctx.exam.paraphrase_share, ctx.exam.seed)
            if any(wording_id(q.id, w) not in done for q in by_cluster[cid] for w in range(k + 1))]
    verdicts: dict[str, dict[str, VerdictRecord]] = defaultdict(dict)
    for v in ctx.store.index(VerdictRecord).values():
        verdicts[v.question_id][v.unit_id] = v
    with ledger_stage(REWORDING_STAGE):
        summary = await fan_out(ctx, state, REWORDING_STAGE, todo, lambda qs: _reword(ctx, qs, verdicts, done))
    ctx.store.append([r for o in summary.outcomes if o.value is not None for r in o.value])
    return stop_update(summary, REWORDING_STAGE)


async def _reword(ctx: ExamContext, questions: list[QuestionRecord],
                  verdicts: dict[str, dict[str, VerdictRecord]], done: dict[str, WordingRecord]) -> list[WordingRecord]:
    """One cluster's question: wording 0 from the exam's verdicts, then the K wordings answered and judged
    for every target."""
    first = questions[0]
    result = await paraphrase(ctx.gateway, first.text, count=ctx.exam.paraphrases, round=first.round,
                              unit_ids=tuple(first.targets))
    texts = [] if isinstance(result.parsed, Unparseable) else \
        [t.strip() for t in result.parsed.paraphrases if t.strip()][: ctx.exam.paraphrases]
    records = []
    for q in questions:
        exam_labels = verdicts.get(q.id, {})
        if wording_id(q.id, 0) not in done and all(uid in exam_labels for uid in q.targets):
            records.append(WordingRecord(id=wording_id(q.id, 0), cluster_id=q.cluster_id, question_id=q.id,
                                         target=q.target, round=q.round, wording=0, text=q.text,
                                         labels={uid: exam_labels[uid].verdict for uid in q.targets}))
    jobs = [(q, w, text) for q in questions for w, text in enumerate(texts, start=1)
            if wording_id(q.id, w) not in done]
    records += await asyncio.gather(*(_ask(ctx, q, w, text) for q, w, text in jobs))
    return records


async def _ask(ctx: ExamContext, question: QuestionRecord, wording: int, text: str) -> WordingRecord:
    """One target's answer to one wording, marked by the run's judge against the question's units."""
    reply = await ask_candidate(ctx.gateway, text, target=question.target, round=question.round,
                                unit_ids=question.targets, stage=REWORDING_STAGE,
                                max_words=ctx.exam.answer_max_words)
    answer, _ = stated_confidence(reply.text.strip())
    marks = await ctx.judge.mark(ExamTask(text, answer, ctx.references(question.targets), question.round))
    return WordingRecord.from_marks(question.targets, marks, NO_MARK, id=wording_id(question.id, wording),
                                    cluster_id=question.cluster_id, question_id=question.id,
                                    target=question.target, round=question.round, wording=wording, text=text,
                                    answer=answer)
