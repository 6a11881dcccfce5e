"""Node `judge` with a judge cascade (examiner.judging.cascade): two passes over the round's answers.

Pass 1 samples the cheap judge on every answer and has the strong judge mark the calibration sample too;
the calibration records are written, the threshold is computed from every calibration record so far, and
pass 2 keeps the confident cheap verdicts and sends the other units to the strong judge. Verdicts are
then recorded exactly as the single judge's are, with a cascade record per unit beside them. A stop in
either pass writes no verdict: the node runs again on resume and the response cache answers every call
already made.
"""

from __future__ import annotations

import math
from typing import Any

from examiner.core.cascade_records import CascadeRecord, ConfidenceSource
from examiner.core.contract import ExamTask
from examiner.core.records import AnswerRecord, QuestionRecord, VerdictRecord
from examiner.exam.nodes.context import ExamContext, fan_out, stable_id, stop_update
from examiner.exam.nodes.judge_units import NO_MARK, Judged
from examiner.exam.state import ExamState
from examiner.judging.cascade import FirstPass


async def judge_with_cascade(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Verdicts for the answers waiting, settled by the cheap judge where it is sure enough."""
    cascade = ctx.cascade
    if cascade is None:
        raise RuntimeError("judge_with_cascade needs a run built with a judge cascade")
    rnd = state["round"]
    answers = [ctx.store.get(AnswerRecord, aid) for aid in ctx.work(state, "to_judge")]
    questions = {a.id: ctx.store.get(QuestionRecord, a.question_id) for a in answers}

    def task(answer: AnswerRecord) -> ExamTask:
        question = questions[answer.id]
        return ExamTask(question.text, answer.text, ctx.references(question.targets), rnd,
                        ctx.source_passages(question.targets))

    first = await fan_out(ctx, state, "judge (cascade)", answers, lambda a: cascade.first_pass(task(a), a.id))
    stopped = stop_update(first, "judging")
    if stopped:
        return stopped
    passes: dict[str, FirstPass] = {a.id: o.value for a, o in zip(answers, first.outcomes) if o.value is not None}
    by_id = {a.id: a for a in answers}
    ctx.store.append(record for aid, p in passes.items() if p.calibration
                     for record in _records(questions[aid], by_id[aid], p, rnd, None, {}))
    thresholds = cascade.thresholds(ctx.store.index(CascadeRecord).values())
    pending = [a for a in answers if a.id in passes]
    second = await fan_out(ctx, state, "judge (escalated)", pending,
                           lambda a: cascade.settle(passes[a.id], thresholds))
    stopped = stop_update(second, "judging")
    if stopped:
        return stopped
    verdicts: list[VerdictRecord] = []
    judged: list[Judged] = []
    cascade_records: list[CascadeRecord] = []
    for answer, outcome in zip(pending, second.outcomes):
        if outcome.value is None:
            continue
        marks, tiers = outcome.value
        question = questions[answer.id]
        records = [
            VerdictRecord.from_mark(marks.get(uid, NO_MARK), id=stable_id("verdict", answer.id, uid),
                                    answer_id=answer.id, question_id=question.id, unit_id=uid, round=rnd,
                                    target=answer.target, mode=ctx.mode.name)
            for uid in question.targets
        ]
        verdicts += records
        judged.append(Judged(records, 0, any(r.verdict == "unscored" for r in records)))
        cascade_records += _records(question, answer, passes[answer.id], rnd,
                                    {source: t.threshold for source, t in thresholds.items()},
                                    {r.unit_id: r.verdict for r in records}, tiers)
    counters = dict(state["counters"])
    counters["unparseable_judgments"] += sum(j.unscored for j in judged)
    ctx.store.append(cascade_records)
    ctx.store.append(verdicts)
    done = {v.answer_id for v in verdicts}
    return {
        "to_judge": ctx.keep([]),
        "judged": ctx.keep([a.id for a in pending if a.id in done]),
        "round_verdicts": ctx.keep(ctx.work(state, "round_verdicts") + [v.id for v in verdicts]),
        "counters": counters,
    }


def _records(question: QuestionRecord, answer: AnswerRecord, first: FirstPass, rnd: int,
             thresholds: dict[ConfidenceSource, float] | None, final: dict[str, str],
             tiers: dict[str, str] | None = None) -> list[CascadeRecord]:
    """One cascade record per target unit: on calibration answers the strong judge's label beside the
    cheap one; elsewhere the tier whose verdict stands."""
    out = []
    for uid in question.targets:
        reading = first.cheap.get(uid)
        strong_label: str | None
        if first.strong is not None:
            mark = first.strong.get(uid)
            strong_label = str(mark.label) if mark is not None and mark.scored else None
            tier = "strong"
        else:
            tier = (tiers or {}).get(uid, "strong")
            strong_label = final.get(uid) if tier == "strong" and final.get(uid) != "unscored" else None
        source: ConfidenceSource = reading.source if reading else "samples"
        threshold = None if thresholds is None else thresholds[source]
        out.append(CascadeRecord(
            id=stable_id("verdict", answer.id, uid), answer_id=answer.id, unit_id=uid, round=rnd,
            target=answer.target, tier=tier, calibration=first.calibration,  # type: ignore[arg-type]
            cheap_label=reading.label if reading else None, confidence=reading.confidence if reading else 0.0,
            confidence_source=source, strong_label=strong_label,
            threshold=None if first.calibration or threshold is None or math.isinf(threshold) else threshold))
    return out
