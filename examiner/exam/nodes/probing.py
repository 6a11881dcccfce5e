"""Node `probe`: a narrower follow-up question on the targets an answer left unrelated (same round)."""

from __future__ import annotations

from typing import Any

from examiner.core.labels import COVERING, Verdict
from examiner.core.records import AnswerRecord, QuestionRecord, VerdictRecord
from examiner.exam.checks import leaking_targets, question_type, word_count
from examiner.exam.nodes.context import ExamContext, fan_out, running, stable_id, stop_update
from examiner.exam.state import ExamState
from examiner.llm import Unparseable
from examiner.agents.examiner.questioner import write_probe

Candidate = tuple[AnswerRecord, list[str]]
"""An answer and the target ids it left unrelated."""


def route_after_judge(ctx: ExamContext, state: ExamState) -> str:
    """`probe` when answers left targets unrelated and the mode allows another probe, else `update`."""
    if not running(state):
        return "finish"
    if not ctx.mode.probes or state.get("probes_done", 0) >= ctx.exam.max_probes:
        return "update"
    return "probe" if probe_candidates(ctx, state) else "update"


def probe_candidates(ctx: ExamContext, state: ExamState) -> list[Candidate]:
    """Answers of the latest judge step with targets judged unrelated and not covered this round."""
    judged = set(ctx.work(state, "judged"))
    stored = ctx.store.index(VerdictRecord)
    verdicts = [v for vid in set(ctx.work(state, "round_verdicts")) if (v := stored.get(vid)) is not None]
    covered_now = {(v.target, v.unit_id) for v in verdicts if v.verdict in COVERING}
    missing: dict[str, set[str]] = {}
    for v in verdicts:
        if v.answer_id in judged and v.verdict == Verdict.UNRELATED and (v.target, v.unit_id) not in covered_now:
            missing.setdefault(v.answer_id, set()).add(v.unit_id)
    return [(ctx.store.get(AnswerRecord, aid), sorted(uids)) for aid, uids in sorted(missing.items())]


async def probe(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Probe questions for the candidates; they go back to `collect_answers`."""
    summary = await fan_out(ctx, state, "probe", probe_candidates(ctx, state),
                            lambda c: write_one_probe(ctx, c, state["round"]))
    probes = summary.values
    ctx.store.append(probes)
    counters = dict(state["counters"])
    counters["leak_rejections"] += sum(p.leak_rejections for p in probes)
    return {"pending": ctx.keep([p.id for p in probes]), "probes_done": state.get("probes_done", 0) + 1,
            "counters": counters, **stop_update(summary, "probing")}


async def write_one_probe(ctx: ExamContext, candidate: Candidate, rnd: int) -> QuestionRecord | None:
    """A probe on the answer's unrelated targets, minus leaking ones; None when nothing usable is left."""
    answer, uids = candidate
    parent = ctx.store.get(QuestionRecord, answer.question_id)
    result = await write_probe(ctx.gateway, parent.text, answer.text, ctx.unit_texts(uids), round=rnd,
                               max_words=ctx.exam.question_max_words)
    if isinstance(result.parsed, Unparseable):
        return None
    question = result.parsed
    inside = [uid for uid in dict.fromkeys(question.target) if uid in uids]
    leaking = set(leaking_targets(question.question, inside, dict(ctx.unit_texts(uids)), ctx.exam.leak_threshold))
    kept = [uid for uid in inside if uid not in leaking]
    if not kept or word_count(question.question) > ctx.exam.question_max_words:
        return None
    return QuestionRecord(
        id=stable_id("probe", parent.id, question.question, *kept), round=rnd, target=parent.target,
        cluster_id=parent.cluster_id, kind="probe", parent_id=parent.id, text=question.question,
        targets=kept, qtype=question_type(question.question), leak_rejections=int(bool(leaking)),
        dropped_targets=[uid for uid in question.target if uid not in uids],
    )


def route_after_probe(ctx: ExamContext, state: ExamState) -> str:
    """`answer` when probes were written, else `update`."""
    if not running(state):
        return "finish"
    return "answer" if ctx.work(state, "pending") else "update"
