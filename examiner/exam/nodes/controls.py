"""Node `controls`: control questions the corpus cannot answer, beside a seeded share of round 1's questions.

Why: an exam of answerable questions cannot tell a target that declines because it does not know from one
that declines everything, nor catch one that answers whatever it is asked. With `exam.control_share` above
0, for a seeded share of round 1's clusters the examiner writes one control question from the cluster's
question units: a false premise, an entity swapped for one the units never name, or a detail they do not
give (the kind rotates, seeded). Every target answers it and the judge labels the answer
`declined_or_corrected` (the right answer) or `accepted_premise`. The records go to controls.jsonl, never
to questions, answers, verdicts or outcomes, so they are never counted in accuracy, outcomes or coverage;
the report's knowledge section reads them. Every call is recorded under the ledger stage `control`. A
resumed run skips the (control, target) pairs on disk, and the cache answers the calls a killed run made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from examiner.agents.candidate.answerer import answer as ask_candidate
from examiner.agents.candidate.confidence import stated_confidence
from examiner.agents.examiner.control_writer import CONTROL_KINDS, CONTROL_STAGE, ControlKind, write_control
from examiner.agents.judge.control_judge import judge_control
from examiner.core.control_records import ControlRecord
from examiner.core.records import QuestionRecord
from examiner.exam.nodes.context import ExamContext, fan_out, running, stable_id, stop_update
from examiner.exam.nodes.rewording import asked_questions
from examiner.exam.nodes.self_check import sample_size
from examiner.exam.state import ExamState
from examiner.llm import Unparseable
from examiner.llm.gateway import ledger_stage

MIN_CONTROLS = 2
"""Fewest controls written when that many clusters exist: one control gives no interval."""


def choose_clusters(cluster_ids: Iterable[str], share: float, seed: int) -> list[str]:
    """A seeded share of the clusters (ranked by a hash of seed and id: the same ones on a resume)."""
    ids = sorted(cluster_ids)
    return sorted(ids, key=lambda cid: stable_id(CONTROL_STAGE, seed, cid))[:sample_size(len(ids), share, MIN_CONTROLS)]


def control_kind(seed: int, cluster_id: str) -> ControlKind:
    """The kind of a cluster's control, seeded, so the three kinds come in about equal shares."""
    return CONTROL_KINDS[int(stable_id("control_kind", seed, cluster_id), 16) % len(CONTROL_KINDS)]


def control_id(cluster_id: str, target: str) -> str:
    return stable_id(CONTROL_STAGE, cluster_id, target)


async def controls(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Write, ask and judge the chosen clusters' controls (skipping the pairs a killed run finished)."""
    if ctx.exam.control_share <= 0 or not running(state) or not ctx.mode.reads_references:
        return {}
    by_cluster = asked_questions(ctx.store.index(QuestionRecord).values())
    done = ctx.store.index(ControlRecord)
    todo = [by_cluster[cid] for cid in choose_clusters(by_cluster, ctx.exam.control_share, ctx.exam.seed)
            if any(control_id(cid, q.target) not in done for q in by_cluster[cid])]
    with ledger_stage(CONTROL_STAGE):
        summary = await fan_out(ctx, state, CONTROL_STAGE, todo, lambda qs: _control(ctx, qs, done))
    ctx.store.append([r for o in summary.outcomes if o.value is not None for r in o.value])
    return stop_update(summary, CONTROL_STAGE)


async def _control(ctx: ExamContext, questions: list[QuestionRecord],
                   done: dict[str, ControlRecord]) -> list[ControlRecord]:
    """One cluster's control: written once (questions are shared by every target), then answered by each
    target and judged. A reply that does not parse writes nothing (a resume asks again)."""
    first = questions[0]
    units = list(ctx.references(first.targets))
    kind = control_kind(ctx.exam.seed, first.cluster_id)
    written = await write_control(ctx.gateway, units, kind, round=first.round,
                                  max_words=ctx.exam.question_max_words)
    if isinstance(written.parsed, Unparseable) or not written.parsed.question.strip():
        return []
    todo = [q for q in questions if control_id(q.cluster_id, q.target) not in done]
    return list(await asyncio.gather(*(_ask(ctx, q, units, kind, written.parsed.question.strip(),
                                            written.parsed.premise.strip()) for q in todo)))


async def _ask(ctx: ExamContext, question: QuestionRecord, units: list[tuple[str, str]], kind: ControlKind,
               text: str, premise: str) -> ControlRecord:
    """One target's answer to the control, labelled by the judge."""
    reply = await ask_candidate(ctx.gateway, text, target=question.target, round=question.round,
                                unit_ids=list(question.targets), stage=CONTROL_STAGE,
                                max_words=ctx.exam.answer_max_words)
    answer, _ = stated_confidence(reply.text.strip())
    verdict = await judge_control(ctx.gateway, text, premise, answer, units, round=question.round)
    parsed = None if isinstance(verdict.parsed, Unparseable) else verdict.parsed
    return ControlRecord(id=control_id(question.cluster_id, question.target), cluster_id=question.cluster_id,
                         question_id=question.id, unit_ids=list(question.targets), target=question.target,
                         round=question.round, kind=kind, text=text, premise=premise, answer=answer,
                         label=parsed.label if parsed else None, reason=parsed.reason if parsed else "")
