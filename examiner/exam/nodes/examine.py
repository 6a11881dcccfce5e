"""Node `examine`: a round's clusters, each carried through its whole chain as soon as the step before is
done, instead of stage by stage over all clusters.

A cluster's chain: its question (examiner.exam.nodes.questions.question_for) -> each active target's
answer -> the judge's verdicts on them -> a probe on the units an answer left unrelated -> its answer
-> its verdicts, up to `max_probes` probes. A staged exam (examiner before this node: one node per step,
questions, answers, judge, probe) waits for every cluster of a step before any cluster starts the next
one, so a round costs the sum of its steps' longest calls; here a cluster that is ready moves on while others still wait
for their question, and the round costs about max(calls / concurrency, its longest chain) call
latencies (experiments/exam_wall_time.py measures both).

Why the results are the same: each step is the staged node's own per-item function; record ids are
functions of their content; the simulator and the response cache answer by request, not by order; and
a unit belongs to one cluster per target and round, so a cluster's probe candidates depend on its own
verdicts only (the staged `probe` node's per-answer rule, applied per cluster).

Records are held back while the chains run (RunStore.hold) and written when the round's chains are done,
in the order the staged nodes wrote them (questions target by target in cluster order, then each probe
level by the answer it follows up; answers in their questions' order; verdicts in their answers' order):
the files hold the records a staged exam wrote, in its order, whatever order the calls finished in, so
identical runs give identical files and reports (answers' embedding similarity, computed per cluster
rather than over the whole step, can differ from a staged exam's in the seventh decimal place). A kill loses the held records of the round in progress; the
resume runs the node again and the response cache answers every call they came from.

Chains in flight are bounded by about twice the endpoints' concurrency (`chain_limit`): enough to keep
every endpoint busy, few enough that a chain's next call is not queued behind every other cluster's
first one. A budget stop or a call that failed for good ends its chain and no new chain starts (the
fan-out's policy); what the chains wrote stays, and a resume runs the node again with the response cache
answering every call already paid.

A run with a judge cascade judges over the whole round (its threshold comes from the round's calibration
sample), so there the chains stop after the answers and the staged `judge` (cascade) and `probe` nodes
take the round on.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from examiner.core.errors import BudgetExhausted
from examiner.core.labels import ATTEMPTED, COVERING, Verdict
from examiner.core.records import AnswerRecord, QuestionRecord, VerdictRecord
from examiner.exam.nodes.answers import answer_one, score_classic
from examiner.exam.nodes.context import ExamContext, fan_out, stable_id, stop_update
from examiner.exam.nodes.judge_units import judge_answer
from examiner.exam.nodes.probing import write_one_probe
from examiner.exam.nodes.questions import question_for
from examiner.exam.state import ClusterState, ExamState
from examiner.exam.stopping import StopWatch, Tally, asking_order, parse_rule
from examiner.llm.transport import ModelCallError

ROLES = ("examiner", "candidate", "judge")


@dataclass
class Chain:
    """What one cluster's chain wrote and counted."""

    answers: list[str] = field(default_factory=list)
    """Ids of the answers it collected (all of them with a cascade: they wait for the judge)."""
    verdicts: list[str] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    probes: int = 0
    """Probe steps it took."""
    step: str = "question generation"
    """The step in progress (what a failure is named after)."""
    covered: set[tuple[str, str]] = field(default_factory=set)
    """(target, unit) pairs a verdict of this chain covered."""


def chain_limit(ctx: ExamContext, targets: list[str]) -> int:
    """Chains in flight: twice the largest concurrency among the endpoints the chains call (each server of
    an endpoint with replicas counts), at least 4."""
    names = {ctx.settings.roles.get(role) for role in ROLES} | set(targets)
    slots = [spec.max_concurrency * (1 + len(spec.replicas))
             for name in names if name and (spec := ctx.settings.endpoints.get(name)) is not None]
    return max(4, 2 * max(slots, default=8))


async def examine(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Every distinct cluster of the round through its chain; the round's work lists and counters."""
    rnd = state["round"]
    distinct: dict[str, ClusterState] = {}
    takers: dict[str, list[str]] = {}
    for target in state["active"]:
        for cluster in ctx.clusters(state, target):
            distinct.setdefault(cluster["id"], cluster)
            takers.setdefault(cluster["id"], []).append(target)
    judging = ctx.cascade is None
    failed_at: Counter[str] = Counter()
    staged = StagedOrder(state["active"], {cid: i for i, cid in enumerate(distinct)})
    limit = chain_limit(ctx, state["active"])
    if judging and rnd == 1 and ctx.exam.stop_when:  # what may be in flight at the stop: a tenth of the clusters
        limit = min(limit, max(2, len(distinct) // 10))
    watch = stop_watch(ctx, rnd, distinct, takers, limit) if judging else None  # --stop-when (exam/stopping.py)
    moved = asyncio.Condition()
    if watch is not None:
        distinct = {cid: distinct[cid] for cid in watch.order}
    position = {cid: i for i, cid in enumerate(distinct)}

    async def chain_of(cluster: ClusterState) -> Chain:
        chain = Chain()
        if watch is not None:  # asked only within the window past the finished prefix, and not past the stop
            async with moved:
                await moved.wait_for(lambda: watch.may_start(position[cluster["id"]]))
            if not watch.asks(position[cluster["id"]]):
                return chain
        try:
            await run_chain(ctx, cluster, takers[cluster["id"]], rnd, judging, chain, staged)
        except (ModelCallError, BudgetExhausted):
            failed_at[chain.step] += 1
            if watch is not None:  # the prefix cannot pass this cluster: no one waits for it
                watch.halted = True
                async with moved:
                    moved.notify_all()
            raise
        if watch is not None:
            watch.done(cluster["id"], tallies(ctx, cluster, takers[cluster["id"]], chain))
            async with moved:
                moved.notify_all()
        return chain

    try:
        summary = await fan_out(ctx, state, "examine clusters", list(distinct.values()), chain_of, limit=limit)
    finally:  # what the chains made is written whatever stopped them (a resume asks the cache for it again)
        if ctx.gateway.cache is not None:  # ... so the cache holds every reply first, whatever kills us after
            await asyncio.to_thread(ctx.gateway.cache.flush)
        ctx.store.release(staged.key)
        if watch is not None:
            watch.save(ctx.store.dir)
    chains = [o.value for o in summary.outcomes if o.value is not None]
    counters = dict(state["counters"])
    for chain in chains:
        for name, count in chain.counters.items():
            counters[name] += count
    answers = sorted((aid for chain in chains for aid in chain.answers),
                     key=lambda aid: staged.key(ctx.store.get(AnswerRecord, aid)))  # as collect_answers listed them
    update: dict[str, Any] = {
        "pending": ctx.keep([]),
        "to_judge": ctx.keep([] if judging else answers),
        "judged": ctx.keep(answers if judging else []),
        "round_verdicts": ctx.keep(ctx.work(state, "round_verdicts") + [v for c in chains for v in c.verdicts]),
        "probes_done": max((chain.probes for chain in chains), default=0) if judging else 0,
        "counters": counters,
    }
    # a stop is named after the step where most chains stopped ("every question generation call failed")
    return update | stop_update(summary, failed_at.most_common(1)[0][0] if failed_at else "examining")


async def run_chain(ctx: ExamContext, cluster: ClusterState, targets: list[str], rnd: int,
                    judging: bool, chain: Chain, staged: StagedOrder) -> Chain:
    """One cluster's chain (see the module docstring), filling `chain` and holding its records for the
    node to write in `staged` order; a failed call or a budget stop raises out of it, with `chain.step`
    naming where."""
    draft = await question_for(ctx, cluster, rnd)
    chain.counters["leak_rejections"] += draft.leak_rejections
    chain.counters["unparseable_questions"] += draft.status == "unparseable"
    questions = [draft.model_copy(update={"target": target, "id": stable_id(draft.id, target)}) for target in targets]
    staged.note(questions)
    ctx.store.hold(questions)
    pending = [q for q in questions if q.status == "ok"]
    while pending:
        chain.step = "answering"
        answers = await _answers(ctx, pending, rnd)
        chain.answers += [a.id for a in answers]
        if not judging:
            return chain
        chain.step = "judging"
        judged = await asyncio.gather(*(judge_answer(ctx, a, rnd) for a in answers))
        verdicts = [v for j in judged for v in j.verdicts]
        ctx.store.hold(verdicts)
        chain.verdicts += [v.id for v in verdicts]
        chain.counters["ignored_verdicts"] += sum(j.ignored for j in judged)
        chain.counters["unparseable_judgments"] += sum(j.unscored for j in judged)
        if not ctx.mode.probes or chain.probes >= ctx.exam.max_probes:
            break
        chain.covered |= {(v.target, v.unit_id) for v in verdicts if v.verdict in COVERING}
        candidates = probe_candidates(answers, verdicts, chain.covered)
        if not candidates:
            break
        chain.step = "probing"
        probes = [p for p in await asyncio.gather(*(write_one_probe(ctx, c, rnd) for c in candidates)) if p]
        chain.probes += 1
        chain.counters["leak_rejections"] += sum(p.leak_rejections for p in probes)
        staged.note(probes)
        ctx.store.hold(probes)
        pending = probes
    return chain


async def _answers(ctx: ExamContext, questions: list[QuestionRecord], rnd: int) -> list[AnswerRecord]:
    """The targets' answers to `questions`, scored by the classic baselines (in a worker thread) and written."""
    answers = list(await asyncio.gather(*(answer_one(ctx, q, rnd) for q in questions)))
    scored = await asyncio.to_thread(score_classic, ctx, answers)
    ctx.store.hold(scored)
    return scored


def stop_watch(ctx: ExamContext, rnd: int, distinct: dict[str, ClusterState],
               takers: dict[str, list[str]], window: int) -> StopWatch | None:
    """Round 1's stop watch when the run has a stopping rule (`exam.stop_when`), else None; `window`
    clusters may start beyond the finished prefix."""
    if rnd != 1 or not ctx.exam.stop_when:
        return None
    sizes: dict[str, dict[str, int]] = {}
    for cid, targets in takers.items():
        for target in targets:
            sizes.setdefault(target, {})[cid] = len(distinct[cid]["members"])
    return StopWatch(parse_rule(ctx.exam.stop_when), asking_order(list(distinct), ctx.exam.seed), sizes,
                     window=window)


def tallies(ctx: ExamContext, cluster: ClusterState, targets: list[str], chain: Chain) -> dict[str, Tally]:
    """Per target, the cluster's units right and answered (right or wrong) by the first covering verdict
    of its chain on each unit, over the cluster's units."""
    out = {target: Tally(units=len(cluster["members"])) for target in targets}
    seen: set[tuple[str, str]] = set()
    for vid in chain.verdicts:
        verdict = ctx.store.get(VerdictRecord, vid)
        key = (verdict.target, verdict.unit_id)
        if verdict.target not in out or key in seen or verdict.verdict not in COVERING:
            continue
        seen.add(key)
        out[verdict.target].correct += verdict.verdict == Verdict.CORRECT
        out[verdict.target].answered += verdict.verdict in ATTEMPTED
        if verdict.verdict in ATTEMPTED:
            out[verdict.target].right[verdict.unit_id] = verdict.verdict == Verdict.CORRECT
    return out


def probe_candidates(answers: list[AnswerRecord], verdicts: list[VerdictRecord],
                     covered: set[tuple[str, str]]) -> list[tuple[AnswerRecord, list[str]]]:
    """The staged `probe` node's rule on one cluster: each just-judged answer with targets judged unrelated
    that no verdict of this cluster's chain covered this round (`covered`: (target, unit) pairs)."""
    ids = {a.id for a in answers}
    missing: dict[str, set[str]] = {}
    for v in verdicts:
        if v.answer_id in ids and v.verdict == Verdict.UNRELATED and (v.target, v.unit_id) not in covered:
            missing.setdefault(v.answer_id, set()).add(v.unit_id)
    by_id = {a.id: a for a in answers}
    return [(by_id[aid], sorted(uids)) for aid, uids in sorted(missing.items())]


class Asked(NamedTuple):
    """What StagedOrder's keys and the coverage update read of a question or probe, without its text and
    gate checks (a decoded question is about 1.8 KB; round 1 of a 200,000-unit exam has about 58,000)."""

    kind: str
    parent_id: str | None
    target: str
    cluster_id: str
    targets: tuple[str, ...]

    @classmethod
    def of(cls, question: QuestionRecord) -> Asked:
        return cls(question.kind, question.parent_id, question.target, question.cluster_id, tuple(question.targets))


class StagedOrder:
    """The order a staged exam wrote a round's records in, as a sort key over records (see the module
    docstring): a question's key is (0, target, cluster) and a probe's (level, 0, 0, the id of the answer
    it follows up); an answer sorts as its question, a verdict as its answer's question, then by the
    unit's place among the question's targets."""

    def __init__(self, targets: list[str], clusters: dict[str, int]) -> None:
        self.targets = {t: i for i, t in enumerate(targets)}
        self.clusters = clusters
        self.questions: dict[str, Asked] = {}

    def note(self, questions: list[QuestionRecord]) -> None:
        """Questions and probes made this round (the keys of answers and verdicts follow theirs), kept as
        the fields the keys read, not whole records (text and gate checks: a round-1 question of a
        200,000-unit exam is one of about 58,000)."""
        self.questions.update((q.id, Asked.of(q)) for q in questions)

    def question_key(self, question: QuestionRecord | Asked) -> tuple[Any, ...]:
        if question.kind != "probe" or not question.parent_id:
            return (0, self.targets.get(question.target, 0), self.clusters.get(question.cluster_id, 0), "")
        level, parent = 1, self.questions.get(question.parent_id)
        while parent is not None and parent.kind == "probe" and parent.parent_id:
            level, parent = level + 1, self.questions.get(parent.parent_id)
        return (level, 0, 0, stable_id("answer", question.parent_id))

    def key(self, record: Any) -> tuple[Any, ...]:
        if isinstance(record, QuestionRecord):
            return self.question_key(record)
        if isinstance(record, AnswerRecord):
            return (*self.question_key(self.questions[record.question_id]), -1)
        if isinstance(record, VerdictRecord):
            question = self.questions[record.question_id]
            return (*self.question_key(question), question.targets.index(record.unit_id)
                    if record.unit_id in question.targets else len(question.targets))
        return (0,)


__all__ = ["Chain", "chain_limit", "examine", "probe_candidates", "run_chain"]
