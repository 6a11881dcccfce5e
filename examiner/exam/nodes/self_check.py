"""Node `self_check`: the run's judge marks a seeded sample of its judged answers a second time.

Why: a judge whose labels change when nothing but the order of the units changes is not measuring the
answer. After the last round, a seeded sample of the judged answers (those with two or more target
units, since one unit has no other order) goes through the SAME judge object again with its units
shuffled (seeded); the calls are recorded under the ledger stage `self_check`, so their cost shows
apart, and each second marking is written to self_check.jsonl. The exam's own verdicts and calls are
untouched: the node runs after them and writes nothing they read. A resumed run skips the answers
already re-judged (their records are on disk) and the cache answers calls that were in flight.

The no-reference judge reads no units, so order cannot reach it: the node does nothing in that mode.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import Any

from examiner.core.contract import ExamTask
from examiner.core.records import SELF_CHECK_STAGE, AnswerRecord, QuestionRecord, SelfCheckRecord, VerdictRecord
from examiner.exam.nodes.context import ExamContext, fan_out, running, stable_id, stop_update
from examiner.exam.nodes.judge_units import NO_MARK
from examiner.exam.state import ExamState
from examiner.llm.gateway import ledger_stage


def sample_size(available: int, share: float, minimum: int) -> int:
    """How many answers to re-judge: `share` of those available (rounded up), at least `minimum` when that
    many exist; 0 when the share is 0 (the self-check is off)."""
    if share <= 0 or available <= 0:
        return 0
    return min(available, max(minimum, math.ceil(share * available)))


def choose_sample(answer_ids: Iterable[str], n: int, seed: int) -> list[str]:
    """A seeded sample of `n` answer ids: the same ids for the same run, whatever order they come in
    (ranked by a hash of seed and id, so a resumed run chooses the same answers)."""
    return sorted(answer_ids, key=lambda aid: stable_id("self_check", seed, aid))[:n]


def other_order(unit_ids: Sequence[str], seed: int, answer_id: str) -> list[str]:
    """The units in a seeded order that differs from the given one (a shuffle that gave the same order
    is rotated by one), so the judge's request really changes."""
    order = list(unit_ids)
    random.Random(stable_id("order", seed, answer_id)).shuffle(order)
    if order == list(unit_ids):
        order = order[1:] + order[:1]
    return order


def candidates(answers: Iterable[AnswerRecord], questions: dict[str, QuestionRecord],
               judged: set[str]) -> list[str]:
    """Ids of the judged answers the self-check may draw: their question has two or more target units."""
    return [a.id for a in answers if a.id in judged and len(questions[a.question_id].targets) >= 2]


async def self_check(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Re-judge the seeded sample (skipping answers a killed run already re-judged)."""
    if not running(state) or not ctx.mode.reads_references:
        return {}
    questions = ctx.store.index(QuestionRecord)
    judged = {v.answer_id for v in ctx.store.index(VerdictRecord).values()}
    pool = candidates(ctx.store.index(AnswerRecord).values(), questions, judged)
    n = sample_size(len(pool), ctx.exam.self_check_share, ctx.exam.self_check_min)
    done = ctx.store.index(SelfCheckRecord)
    todo = [ctx.store.get(AnswerRecord, aid) for aid in choose_sample(pool, n, ctx.exam.seed)
            if stable_id(SELF_CHECK_STAGE, aid) not in done]
    with ledger_stage(SELF_CHECK_STAGE):
        summary = await fan_out(ctx, state, SELF_CHECK_STAGE, todo,
                                lambda a: _rejudge(ctx, a, questions[a.question_id]))
    ctx.store.append([o.value for o in summary.outcomes if o.value is not None])
    return stop_update(summary, SELF_CHECK_STAGE)


async def _rejudge(ctx: ExamContext, answer: AnswerRecord, question: QuestionRecord) -> SelfCheckRecord:
    order = other_order(question.targets, ctx.exam.seed, answer.id)
    marks = await ctx.judge.mark(ExamTask(question.text, answer.text, ctx.references(order), answer.round))
    return SelfCheckRecord.from_marks(order, marks, NO_MARK, id=stable_id(SELF_CHECK_STAGE, answer.id),
                                      answer_id=answer.id, question_id=question.id, target=answer.target,
                                      round=answer.round)
