"""Nodes of a paper sitting: the exam graph's entry for `--paper` (examiner/exam/paper.py says what a paper is).

    start_paper -> sit_round (once per round of the paper) -> self_check -> finish

Why in the graph rather than beside it: a sitting then stops, checkpoints and resumes as an exam does
(a budget stop resumes from the checkpoint before the round that ran out of money; a kill from the last
checkpoint), judges with the exam's own judge, panel or cascade node, and re-marks its seeded sample with
the exam's self-check node. Every step reads what the run folder already holds and skips it, so a rerun of
a step after a kill writes the same records and pays for nothing twice (the response cache answers calls
in flight at the kill).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from examiner.core.labels import COVERING
from examiner.core.records import (
    AnswerRecord,
    QuestionRecord,
    RoundSummary,
    RunInfo,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
)
from examiner.exam.nodes.answers import answer_one, score_classic
from examiner.exam.nodes.context import ExamContext, fan_out, running, stable_id, stop_update
from examiner.exam.nodes.judge_cascade import judge_with_cascade
from examiner.exam.nodes.judge_units import judge_answer
from examiner.exam.paper import Paper
from examiner.exam.state import COUNTERS, ExamState

COMPLETED_REASON = "every question of the paper was sat"


def paper_questions(paper: Paper, target: str) -> list[QuestionRecord]:
    """The paper's questions as put to `target`: the same text, round, cluster and units, new ids."""

    def new_id(question_id: str) -> str:
        return stable_id("paper", paper.run_id, question_id, target)

    return [q.model_copy(update={"id": new_id(q.id), "target": target,
                                 "parent_id": new_id(q.parent_id) if q.parent_id else None})
            for q in paper.questions]


def paper_rounds(paper: Paper) -> list[int]:
    """The rounds of the paper, in order."""
    return sorted({q.round for q in paper.questions})


def _paper(ctx: ExamContext) -> Paper:
    if ctx.paper is None:
        raise RuntimeError("a paper node ran in an exam without a paper")
    return ctx.paper


def write_paper_start(ctx: ExamContext, paper: Paper) -> None:
    """Passages, the paper's clusterings (for each new target), units and questions. Written again in
    full by a rerun after a kill: files are replaced whole and records a file already holds are skipped,
    so a kill between two of these writes leaves nothing out."""
    store = ctx.store
    store.write_passages(paper.passages)
    for target in ctx.targets:
        for rnd in paper.clusters:
            store.write_clusters(rnd.model_copy(update={"target": target}))
    store.append(paper.units.values())
    store.append([q for target in ctx.targets for q in paper_questions(paper, target)])
    ctx.units = store.all(UnitRecord)
    ctx.passages = {p["id"]: p["text"] for p in paper.passages}
    # answers and judging in the paper's language, unless --language (the setting) names another
    ctx.gateway.language = ctx.exam.language if ctx.exam.language != "auto" else paper.language
    info = store.read_info()
    info.language = ctx.gateway.language
    info.units, info.passages = len(ctx.units), len(paper.passages)
    info.documents = len({s.document for u in ctx.units.values() for s in u.sources})
    store.write_info(info)


async def start_paper(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Node `start_paper`: the paper's units, passages, clusterings and questions into the run folder; the
    state before its first round (round 0: none sat yet)."""
    write_paper_start(ctx, _paper(ctx))
    return {"round": 0, "status": "running", "stop_reason": "", "active": list(ctx.targets),
            "pool_left": {t: 0 for t in ctx.targets}, "counters": dict.fromkeys(COUNTERS, 0), "rounds": []}


async def sit_round(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Node `sit_round`: the paper's next round after `state["round"]` answered by every target and judged
    (questions answered or answers judged before a kill are skipped); `round` becomes the round sat."""
    rnd = min(r for r in paper_rounds(_paper(ctx)) if r > state["round"])
    here: ExamState = {**state, "round": rnd}  # type: ignore[typeddict-item]
    round_ids = {q.id for q in ctx.store.all(QuestionRecord).values() if q.target in ctx.targets and q.round == rnd}
    answered = {a.question_id for a in ctx.store.all(AnswerRecord).values()}
    todo = [q for q in ctx.store.all(QuestionRecord).values() if q.id in round_ids and q.id not in answered]
    summary = await fan_out(ctx, here, "paper answers", todo, lambda q: answer_one(ctx, q, rnd))
    ctx.store.append(await asyncio.to_thread(score_classic, ctx, summary.values))
    if stop := stop_update(summary, "answering"):
        return stop
    judged = {v.answer_id for v in ctx.store.all(VerdictRecord).values()}
    answers = [a for a in ctx.store.all(AnswerRecord).values() if a.question_id in round_ids and a.id not in judged]
    return await _judge(ctx, here, answers) or {"round": rnd}


async def _judge(ctx: ExamContext, state: ExamState, answers: list[AnswerRecord]) -> dict[str, Any]:
    """The round's answers judged as the exam judges them: by the judge cascade when the run has one (the
    exam's own cascade node, so calibration, thresholds and cascade records are the exam's), else by the
    run's judge or panel. A stop update, or {} when every answer was judged."""
    if ctx.cascade is not None:
        cascade_state: ExamState = {**state, "to_judge": ctx.keep([a.id for a in answers]),  # type: ignore[typeddict-item]
                                    "round_verdicts": ctx.keep([]), "counters": dict.fromkeys(COUNTERS, 0)}
        update = await judge_with_cascade(ctx, cascade_state)
        return {key: update[key] for key in ("status", "stop_reason") if key in update}
    marked = await fan_out(ctx, state, "paper judge", answers, lambda a: judge_answer(ctx, a, state["round"]))
    ctx.store.append([v for j in marked.values for v in j.verdicts])
    return stop_update(marked, "judging")


def route_after_sitting(ctx: ExamContext, state: ExamState) -> str:
    """`sit_round` while the paper has a later round, then `self_check`; `finish` after a stop."""
    if not running(state):
        return "finish"
    return "sit_round" if any(r > state["round"] for r in paper_rounds(_paper(ctx))) else "self_check"


def outcomes(ctx: ExamContext) -> tuple[list[UnitOutcome], list[RoundSummary]]:
    """Every unit's outcome per target and the rounds' bookkeeping (see examiner/exam/paper.py)."""
    questions = ctx.store.all(QuestionRecord)
    verdicts = sorted(ctx.store.all(VerdictRecord).values(), key=lambda v: (v.round, v.question_id, v.unit_id))
    result: list[UnitOutcome] = []
    rounds: list[RoundSummary] = []
    for target in ctx.targets:
        mine = [v for v in verdicts if v.target == target]
        covering: dict[str, VerdictRecord] = {}
        for v in mine:
            if v.verdict in COVERING and v.unit_id not in covering:
                covering[v.unit_id] = v
        targeted = Counter(uid for q in questions.values() if q.target == target for uid in q.targets)
        for uid in ctx.units:
            v = covering.get(uid)
            q = questions[v.question_id] if v else None
            status = v.verdict if v else ("unanswered" if targeted[uid] else "uncovered")
            result.append(UnitOutcome(
                unit_id=uid, target=target, status=status, verdict_id=v.id if v else None,  # type: ignore[arg-type]
                times_targeted=targeted[uid], times_targeted_uncovered=sum(
                    1 for x in mine if x.unit_id == uid and x.verdict not in COVERING),
                covered_round=v.round if v else None, cluster_id=q.cluster_id if q else None,
                qtype=q.qtype if q else None))
        pool = len(ctx.units)
        for rnd in sorted({q.round for q in questions.values() if q.target == target}):
            asked = [q for q in questions.values() if q.target == target and q.round == rnd]
            covered = sum(1 for v in covering.values() if v.round == rnd)
            rounds.append(RoundSummary(round=rnd, target=target, pool_before=pool,
                                       clusters=len({q.cluster_id for q in asked}),
                                       questions=sum(q.kind != "probe" for q in asked),
                                       probes=sum(q.kind == "probe" for q in asked), covered=covered,
                                       pool_after=pool - covered))
            pool -= covered
    return result, rounds


def finish_paper(ctx: ExamContext, state: ExamState, finished: float) -> RunInfo:
    """Outcomes and run.json with the final status and the rounds (the `finish` node of a sitting)."""
    results, rounds = outcomes(ctx)
    ctx.store.append(results)
    info = ctx.store.read_info()
    status = state.get("status", "running")
    info.status = "completed" if status == "running" else status
    info.stop_reason = state.get("stop_reason") or (COMPLETED_REASON if status == "running" else "")
    info.rounds = rounds
    info.unparseable_judgments = sum(1 for v in ctx.store.all(VerdictRecord).values() if v.verdict == "unscored")
    info.finished = finished
    ctx.store.write_info(info)
    return info


__all__ = ["finish_paper", "outcomes", "paper_questions", "paper_rounds", "route_after_sitting", "sit_round",
           "start_paper", "write_paper_start"]
