"""One validated question per cluster (the first step of each cluster's chain in node `examine`,
examiner/exam/nodes/examine.py), put to every active target.

A question must target units of its cluster, stay under the word limit and not give away a target's
content; a rejected draft is regenerated with the reason as feedback (up to MAX_QUESTION_ATTEMPTS). With
`question_gate` on, the question then goes through the gate (examiner/exam/gate/) before any target sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from examiner.core.records import QuestionRecord
from examiner.exam.checks import leaking_targets, question_type, word_count
from examiner.exam.gate.gating import gated
from examiner.exam.nodes.context import ExamContext, stable_id
from examiner.exam.state import ClusterState
from examiner.llm import Unparseable
from examiner.agents.examiner.questioner import Question, write_question

MAX_QUESTION_ATTEMPTS = 3


@dataclass
class Drafting:
    """What the attempts at one cluster's question have produced so far."""

    cluster: ClusterState
    round: int
    texts: dict[str, str]
    feedback: str = ""
    leaks: int = 0
    regenerations: int = 0
    dropped: list[str] = field(default_factory=list)
    last: Question | None = None

    def record(self, text: str, targets: list[str], status: str) -> QuestionRecord:
        return QuestionRecord(
            id=stable_id(self.round, self.cluster["id"], text, *targets),
            round=self.round, target="", cluster_id=self.cluster["id"], kind="question", text=text,
            targets=targets, qtype=question_type(text), leak_rejections=self.leaks,
            regenerations=self.regenerations, dropped_targets=sorted(set(self.dropped)),
            status=status,  # type: ignore[arg-type]
        )


async def question_for(ctx: ExamContext, cluster: ClusterState, rnd: int) -> QuestionRecord:
    """A validated question for a cluster, or a record saying why there is none."""
    units = ctx.unit_texts(cluster["members"])
    draft = Drafting(cluster, rnd, dict(units))

    async def rewrite(feedback: str) -> QuestionRecord | None:
        """The question gate's one rewrite (examiner/exam/gate/gating.py), held to the same review."""
        result = await write_question(ctx.gateway, units, round=rnd, max_words=ctx.exam.question_max_words,
                                      feedback=feedback, gate_attempt=1)
        if isinstance(result.parsed, Unparseable) or review(ctx, draft, result.parsed) is not None or draft.last is None:
            return None
        return draft.record(draft.last.question, draft.last.target, "ok")

    for attempt in range(MAX_QUESTION_ATTEMPTS):
        result = await write_question(ctx.gateway, ctx.unit_texts(cluster["members"]), round=rnd,
                                      max_words=ctx.exam.question_max_words, feedback=draft.feedback)
        if isinstance(result.parsed, Unparseable):
            return draft.record("", [], "unparseable")
        draft.regenerations = attempt
        problem = review(ctx, draft, result.parsed)
        if problem is None:
            assert draft.last is not None
            return await gated(ctx, units, draft.record(draft.last.question, draft.last.target, "ok"), rnd, rewrite)
        draft.feedback = problem
    return await gated(ctx, units, salvage(ctx, draft), rnd, rewrite)


def review(ctx: ExamContext, draft: Drafting, question: Question) -> str | None:
    """Keep the draft's targets inside the cluster; the feedback for a rejected draft, None if it passes."""
    inside = [uid for uid in dict.fromkeys(question.target) if uid in draft.texts]
    draft.dropped += [uid for uid in question.target if uid not in draft.texts]
    draft.last = question.model_copy(update={"target": inside})
    limit = ctx.exam.question_max_words
    if not inside:
        return "the target list named no unit shown; list ids of the units above."
    if word_count(question.question) > limit:
        return f"the question had {word_count(question.question)} words; stay under {limit}."
    leaking = leaking_targets(question.question, inside, draft.texts, ctx.exam.leak_threshold)
    if leaking:
        draft.leaks += 1
        return f"the question gives away the content of unit(s) {', '.join(leaking)}; ask without revealing it."
    return None


def salvage(ctx: ExamContext, draft: Drafting) -> QuestionRecord:
    """Out of attempts: the last question minus its leaking targets when it is otherwise usable."""
    last = draft.last
    if last is not None and last.target and word_count(last.question) <= ctx.exam.question_max_words:
        leaking = set(leaking_targets(last.question, last.target, draft.texts, ctx.exam.leak_threshold))
        kept = [uid for uid in last.target if uid not in leaking]
        if kept:
            return draft.record(last.question, kept, "ok")
    return draft.record(last.question if last else "", [], "no_targets")
