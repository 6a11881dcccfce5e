"""Node `judge`: the run's judge marks every target unit of each new answer; one verdict record per target.

The judge is whatever the run was built with (Ref-Eval, Top, no-reference, RevisEval, G-Eval, or a
panel of any of them). A target it gave no usable mark is recorded `unscored` with the reason and stays
in the pool; a mark for a unit that was not a target is ignored, logged and counted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from examiner.core.contract import ExamTask, Mark
from examiner.core.records import AnswerRecord, QuestionRecord, VerdictRecord
from examiner.exam.nodes.context import ExamContext, fan_out, stable_id, stop_update
from examiner.exam.state import ExamState

log = logging.getLogger(__name__)

NO_MARK = Mark.unscored("the judge gave no usable verdict for this unit")


@dataclass
class Judged:
    """The verdicts on one answer and what had to be left out."""

    verdicts: list[VerdictRecord]
    ignored: int
    """Marks for units that were not targets of the question."""
    unscored: bool
    """Whether any target got no usable verdict."""


async def judge(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Verdicts for the answers waiting; they join this round's verdicts."""
    answers = [ctx.store.get(AnswerRecord, aid) for aid in ctx.work(state, "to_judge")]
    summary = await fan_out(ctx, state, "judge", answers, lambda a: judge_answer(ctx, a, state["round"]))
    judged = [o.value for o in summary.outcomes]
    verdicts = [v for j in judged if j is not None for v in j.verdicts]
    counters = dict(state["counters"])
    counters["ignored_verdicts"] += sum(j.ignored for j in judged if j is not None)
    counters["unparseable_judgments"] += sum(j.unscored for j in judged if j is not None)
    ctx.store.append(verdicts)
    return {
        "to_judge": ctx.keep([]),
        "judged": ctx.keep([a.id for a, j in zip(answers, judged) if j is not None]),
        "round_verdicts": ctx.keep(ctx.work(state, "round_verdicts") + [v.id for v in verdicts]),
        "counters": counters,
        **stop_update(summary, "judging"),
    }


async def judge_answer(ctx: ExamContext, answer: AnswerRecord, rnd: int) -> Judged:
    """The judge's marks for one answer, as one verdict record per target of its question."""
    question = ctx.store.get(QuestionRecord, answer.question_id)
    marks = await ctx.judge.mark(ExamTask(question.text, answer.text, ctx.references(question.targets), rnd))
    strays = [uid for uid in marks if uid not in question.targets]
    for uid in strays:
        log.info("ignored a verdict for %s, not a target of question %s", uid, question.id)
    records = [
        VerdictRecord.from_mark(marks.get(uid, NO_MARK), id=stable_id("verdict", answer.id, uid),
                                answer_id=answer.id, question_id=question.id, unit_id=uid, round=rnd,
                                target=answer.target, mode=ctx.mode.name)
        for uid in question.targets
    ]
    return Judged(records, len(strays), any(r.verdict == "unscored" for r in records))
