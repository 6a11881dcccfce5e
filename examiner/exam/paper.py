"""A frozen exam paper: new targets sit exactly the questions an earlier run asked, judged against the
same knowledge units, so that results taken months apart compare.

Why not the adaptive loop: the exam chooses each round's questions from what the target has not yet
covered, so two targets examined separately get different papers. Here the questions are fixed: every
question and probe the earlier run's target was asked (in every round, as recorded) is put to each new
target, and the run's judge marks each of its target units (a judge cascade, when the run has one,
through the exam's own cascade node: cheap where sure enough, strong elsewhere, with cascade records).
Question ids are new (they name the new target); texts, rounds, clusters, kinds and targeted units are
the paper's. After the last round the judge re-marks a seeded sample of the answers (the self-check, as
in an exam), so the re-sit's health is measured rather than incomplete. A sitting that stopped (budget,
kill) continues with `examiner resume`: answers and verdicts already written are kept. Options that
shape the paper (mode, units, clusters, rounds, probes, corpus preparation) are the paper's: asked for
with --paper they are refused in one line (examiner.exam.option_fit).

Outcomes: a unit is covered (correct / incorrect) by its earliest correct or incorrect verdict; a unit the
paper asked about that was never covered is `unanswered`; a unit the paper never asked about stays
`uncovered`.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examiner.core.labels import COVERING
from examiner.core.records import (
    AnswerRecord,
    ClusterRound,
    QuestionRecord,
    RoundSummary,
    RunInfo,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
)
from examiner.core.rundir import RunDir
from examiner.core.errors import UserError
from examiner.exam.nodes.answers import answer_one, score_classic
from examiner.exam.nodes.context import ExamContext, fan_out, stable_id, stop_update
from examiner.exam.nodes.judge_cascade import judge_with_cascade
from examiner.exam.nodes.judge_units import judge_answer
from examiner.exam.nodes.self_check import self_check
from examiner.exam.state import COUNTERS

_KIND_ORDER = {"question": 0, "top": 0, "probe": 1}


@dataclass(frozen=True)
class Paper:
    """The questions of one target of an earlier run, with the units and passages they were judged on."""

    source: str
    run_id: str
    target: str
    """The earlier run's target whose questions these are."""
    mode: str
    units: dict[str, UnitRecord]
    passages: list[dict[str, Any]]
    clusters: list[ClusterRound]
    questions: list[QuestionRecord]
    """The questions that were put to the target (those with a recorded answer), in round order."""
    language: str = ""
    """The earlier run's exam language (empty for runs before examiner recorded it: English)."""


def read_paper(run_dir: str | Path, target: str | None = None) -> Paper:
    """The paper of `target` in an earlier run (its only target when None); UserError when there is none."""
    records = RunDir(run_dir).read()
    targets = list(dict.fromkeys([*records.info.targets, *(q.target for q in records.questions.values())]))
    if target is None:
        if len(targets) != 1:
            raise UserError(f"{run_dir} examined {len(targets)} targets ({', '.join(targets) or 'none'}): "
                            "name the one whose paper to sit with --paper-target")
        target = targets[0]
    elif target not in targets:
        raise UserError(f"{run_dir} did not examine '{target}' (its targets: {', '.join(targets) or 'none'})")
    asked = {a.question_id for a in records.answers.values()}
    questions = sorted((q for q in records.questions.values() if q.target == target and q.id in asked),
                       key=lambda q: (q.round, _KIND_ORDER.get(q.kind, 0), q.id))
    if not questions:
        raise UserError(f"{run_dir} holds no answered questions for '{target}': no paper to sit")
    return Paper(source=str(Path(run_dir).resolve()), run_id=records.info.run_id, target=target,
                 mode=records.info.mode, units=records.units, passages=list(records.passages.values()),
                 clusters=records.clusters.get(target, []), questions=questions,
                 language=records.info.language)


def paper_questions(paper: Paper, target: str) -> list[QuestionRecord]:
    """The paper's questions as put to `target`: the same text, round, cluster and units, new ids."""

    def new_id(question_id: str) -> str:
        return stable_id("paper", paper.run_id, question_id, target)

    return [q.model_copy(update={"id": new_id(q.id), "target": target,
                                 "parent_id": new_id(q.parent_id) if q.parent_id else None})
            for q in paper.questions]


def write_paper_start(ctx: ExamContext, paper: Paper) -> None:
    """Units, passages, the paper's clusterings (for each new target) and questions, once per run."""
    store = ctx.store
    if not store.all(UnitRecord):
        store.append(paper.units.values())
        store.write_passages(paper.passages)
        for target in ctx.targets:
            for rnd in paper.clusters:
                store.write_clusters(rnd.model_copy(update={"target": target}))
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


async def sit(ctx: ExamContext, paper: Paper) -> dict[str, Any]:
    """Answer and judge every question of the paper for every target, round by round (what is already in
    the run directory is kept); a stop update ({"status", "stop_reason"}) or {} when all were sat."""
    write_paper_start(ctx, paper)
    questions = [q for q in ctx.store.all(QuestionRecord).values() if q.target in ctx.targets]
    for rnd in sorted({q.round for q in questions}):
        state: dict[str, Any] = {"round": rnd, "active": list(ctx.targets),
                                 "pool_left": {t: 0 for t in ctx.targets}}
        answered = {a.question_id for a in ctx.store.all(AnswerRecord).values()}
        todo = [q for q in questions if q.round == rnd and q.id not in answered]
        summary = await fan_out(ctx, state, "paper answers", todo, lambda q, rnd=rnd: answer_one(ctx, q, rnd))  # type: ignore[arg-type]
        ctx.store.append(await asyncio.to_thread(score_classic, ctx, summary.values))
        if stop := stop_update(summary, "answering"):
            return stop
        judged = {v.answer_id for v in ctx.store.all(VerdictRecord).values()}
        round_ids = {q.id for q in questions if q.round == rnd}
        answers = [a for a in ctx.store.all(AnswerRecord).values() if a.question_id in round_ids and a.id not in judged]
        if stop := await _judge(ctx, state, answers, rnd):
            return stop
    # the judge re-marks a seeded sample, as after an exam's last round, so the re-sit's health is measured
    last = {"round": max((q.round for q in questions), default=1), "active": list(ctx.targets),
            "pool_left": {t: 0 for t in ctx.targets}}
    return await self_check(ctx, last) or {}  # type: ignore[arg-type]


async def _judge(ctx: ExamContext, state: dict[str, Any], answers: list[AnswerRecord], rnd: int) -> dict[str, Any]:
    """The round's answers judged as the exam judges them: by the judge cascade when the run has one (the
    exam's own cascade node, so calibration, thresholds and cascade records are the exam's), else by the
    run's judge or panel. A stop update, or {} when every answer was judged."""
    if ctx.cascade is not None:
        cascade_state = dict(state, to_judge=ctx.keep([a.id for a in answers]), round_verdicts=ctx.keep([]),
                             counters=dict.fromkeys(COUNTERS, 0))
        update = await judge_with_cascade(ctx, cascade_state)  # type: ignore[arg-type]
        return {key: update[key] for key in ("status", "stop_reason") if key in update}
    marked = await fan_out(ctx, state, "paper judge", answers, lambda a: judge_answer(ctx, a, rnd))  # type: ignore[arg-type]
    ctx.store.append([v for j in marked.values for v in j.verdicts])
    return stop_update(marked, "judging")


def outcomes(ctx: ExamContext) -> tuple[list[UnitOutcome], list[RoundSummary]]:
    """Every unit's outcome per target and the rounds' bookkeeping (see the module docstring)."""
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


def finish_paper(ctx: ExamContext, stop: dict[str, Any], finished: float) -> RunInfo:
    """Outcomes and run.json with the final status and the rounds."""
    results, rounds = outcomes(ctx)
    ctx.store.append(results)
    info = ctx.store.read_info()
    info.status = stop.get("status", "completed")  # type: ignore[assignment]
    info.stop_reason = stop.get("stop_reason", "every question of the paper was sat")
    info.rounds = rounds
    info.unparseable_judgments = sum(1 for v in ctx.store.all(VerdictRecord).values() if v.verdict == "unscored")
    info.finished = finished
    ctx.store.write_info(info)
    return info
