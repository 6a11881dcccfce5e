"""The exam graph's nodes: each a short async step over ExamState that calls agents and writes records.

Work inside a node runs concurrently (the gateway bounds it per endpoint). A budget stop inside a node
keeps every record already written and routes the graph to `finish` with status `budget_exhausted`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, TypeVar

import numpy as np

from examiner.roles.candidate import answer as ask_candidate
from examiner.roles.judge import judge_units, judge_without_reference
from examiner.roles.questioner import Question, write_probe, write_question
from examiner.config import ExamSettings, Settings
from examiner.errors import BudgetExhausted
from examiner.exam.checks import leaking_targets, question_type, word_count
from examiner.exam.progress import ExamProgress
from examiner.core.records import (
    AnswerRecord,
    ClusterRecord,
    ClusterRound,
    QuestionRecord,
    RoundSummary,
    UnitRecord,
    VerdictRecord,
)
from examiner.exam.state import ClusterState, ExamState
from examiner.exam.store import RunStore
from examiner.llm import Gateway, ModelCallError, Unparseable
from examiner.vectors import Embedder, k_for, kmeans, project_2d

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_QUESTION_ATTEMPTS = 3
COVERED = ("correct", "incorrect")


def stable_id(*parts: object) -> str:
    """Short deterministic id from its inputs (what makes a resumed run write the same records)."""
    return hashlib.sha1("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:16]


@dataclass
class ExamContext:
    """Resources the nodes share; rebuilt on resume (the checkpointer saves only the state)."""

    settings: Settings
    gateway: Gateway
    store: RunStore
    embedder: Embedder
    targets: list[str]
    mode: str
    judge_mode: str
    progress: ExamProgress
    units: dict[str, UnitRecord] = field(default_factory=dict)
    passages: dict[str, str] = field(default_factory=dict)
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def exam(self) -> ExamSettings:
        return self.settings.exam

    def passage_for(self, unit_id: str) -> str:
        """Text of the unit's first source passage (the Top baseline judges against it)."""
        return self.passages.get(self.units[unit_id].sources[0].passage_id, self.units[unit_id].text)

    def vectors(self, ids: list[str]) -> np.ndarray:
        missing = [uid for uid in ids if uid not in self._vectors]
        if missing:
            embedded = self.embedder.embed([self.units[uid].text for uid in missing])
            self._vectors.update(zip(missing, embedded))
        return np.stack([self._vectors[uid] for uid in ids]) if ids else np.zeros((0, 384), np.float32)


@dataclass
class Outcome:
    """What one concurrent task produced: a value, or the reason it has none."""

    value: Any = None
    budget: bool = False
    error: str = ""


async def run_all(
    items: list[T], work: Callable[[T], Awaitable[Any]], on_done: Callable[[], None]
) -> list[Outcome]:
    """Run `work` on every item concurrently; a budget stop or a failed call ends only its own task."""

    async def one(item: T) -> Outcome:
        try:
            return Outcome(value=await work(item))
        except BudgetExhausted:
            return Outcome(budget=True)
        except ModelCallError as exc:
            log.warning("model call failed: %s", exc)
            return Outcome(error=str(exc))
        finally:
            on_done()

    return list(await asyncio.gather(*(one(item) for item in items)))


def _after(outcomes: list[Outcome], stage: str) -> dict[str, Any]:
    """State updates for a node's end: a budget stop, or every call failing (endpoint down)."""
    if any(o.budget for o in outcomes):
        return {"status": "budget_exhausted", "stop_reason": f"budget exhausted during {stage}"}
    if outcomes and all(o.error for o in outcomes):
        return {"status": "failed", "stop_reason": f"every {stage} call failed: {outcomes[0].error}"}
    return {}


class ExamNodes:
    """Node functions bound to one run's resources."""

    def __init__(self, ctx: ExamContext) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ cluster
    async def cluster(self, state: ExamState) -> dict[str, Any]:
        ctx, rnd = self.ctx, state["round"]
        clusters: dict[str, list[ClusterState]] = {}
        unit_cluster = {t: dict(v) for t, v in state["unit_cluster"].items()}
        shared: dict[tuple[str, ...], list[ClusterState]] = {}
        for target in state["active"]:
            pool = state["pools"][target]
            key = tuple(pool)
            if key not in shared:
                with ctx.progress.stage(rnd, "cluster", 1, len(pool)):
                    shared[key] = await asyncio.to_thread(self._cluster_pool, pool, rnd, target)
            clusters[target] = shared[key]
            for cluster in clusters[target]:
                for uid in cluster["members"]:
                    unit_cluster[target][uid] = cluster["id"]
        return {"clusters": clusters, "unit_cluster": unit_cluster, "probes_done": 0, "round_verdicts": []}

    def _cluster_pool(self, pool: list[str], rnd: int, target: str) -> list[ClusterState]:
        ctx = self.ctx
        vectors = ctx.vectors(pool)
        if ctx.mode == "top":
            groups = [[uid] for uid in pool]
            centers = list(pool)
            k = len(pool)
        else:
            k = k_for(len(pool), ctx.exam.cluster_size)
            result = kmeans(vectors, k, seed=ctx.exam.seed + rnd)
            groups, centers = [], []
            for index in range(result.k):
                members = result.members(index)
                if len(members) == 0:
                    continue
                center = int(result.centers[index])
                order = np.argsort(-(vectors[members] @ vectors[center]), kind="stable")
                ranked = [pool[int(members[i])] for i in order]
                ranked.remove(pool[center])
                groups.append([pool[center]] + ranked)
                centers.append(pool[center])
        clusters = [
            ClusterState(id=f"r{rnd}-c{i}-{stable_id(*members)[:6]}", center=members[0], members=members)
            for i, members in enumerate(groups)
        ]
        projection = {}
        if ctx.mode != "top" and 2 <= len(pool) <= 20000:
            coords = project_2d(vectors, "pca", seed=ctx.exam.seed)
            projection = {uid: (float(x), float(y)) for uid, (x, y) in zip(pool, coords)}
        ctx.store.write_clusters(
            ClusterRound(
                round=rnd, target=target, k=len(clusters),
                clusters=[ClusterRecord(id=c["id"], center=c["center"], members=c["members"]) for c in clusters],
                projection=projection,
            )
        )
        return clusters

    # ------------------------------------------------------------------ questions
    async def generate_questions(self, state: ExamState) -> dict[str, Any]:
        ctx, rnd = self.ctx, state["round"]
        distinct: dict[str, ClusterState] = {}
        for target in state["active"]:
            for cluster in state["clusters"][target]:
                distinct.setdefault(cluster["id"], cluster)
        items = list(distinct.values())
        pool = sum(len(state["pools"][t]) for t in state["active"])
        with ctx.progress.stage(rnd, "generate questions", len(items), pool) as tick:
            outcomes = await run_all(items, lambda c: self._question_for(c, rnd), tick.advance)
        records: list[QuestionRecord] = []
        counters = dict(state["counters"])
        by_cluster = {c["id"]: o.value for c, o in zip(items, outcomes) if o.value is not None}
        for target in state["active"]:
            for cluster in state["clusters"][target]:
                draft = by_cluster.get(cluster["id"])
                if draft is None:
                    continue
                record = draft.model_copy(update={"target": target, "id": stable_id(draft.id, target)})
                records.append(record)
        for draft in by_cluster.values():
            counters["leak_rejections"] += draft.leak_rejections
            counters["unparseable_questions"] += draft.status == "unparseable"
        ctx.store.append(records)
        update: dict[str, Any] = {
            "pending": [r.id for r in records if r.status == "ok"],
            "counters": counters,
        }
        update.update(_after(outcomes, "question generation"))
        return update

    async def _question_for(self, cluster: ClusterState, rnd: int) -> QuestionRecord:
        """A validated question for a cluster: targets inside the cluster, short enough, no leaks."""
        ctx = self.ctx
        members = cluster["members"]
        texts = {uid: ctx.units[uid].text for uid in members}
        units = [(uid, texts[uid]) for uid in members]
        feedback, leaks, dropped_all, regenerations = "", 0, [], 0
        last: Question | None = None
        for attempt in range(MAX_QUESTION_ATTEMPTS):
            result = await write_question(
                ctx.gateway, units, round=rnd, max_words=ctx.exam.question_max_words, feedback=feedback
            )
            if isinstance(result.parsed, Unparseable):
                return self._question_record(cluster, rnd, "", [], "unparseable", leaks, regenerations, dropped_all)
            question = result.value()
            inside = [uid for uid in dict.fromkeys(question.target) if uid in texts]
            dropped_all += [uid for uid in question.target if uid not in texts]
            last = question.model_copy(update={"target": inside})
            regenerations = attempt
            if not inside:
                feedback = "the target list named no unit shown; list ids of the units above."
                continue
            if word_count(question.question) > ctx.exam.question_max_words:
                feedback = f"the question had {word_count(question.question)} words; stay under {ctx.exam.question_max_words}."
                continue
            leaking = leaking_targets(question.question, inside, texts, ctx.exam.leak_threshold)
            if leaking:
                leaks += 1
                feedback = f"the question gives away the content of unit(s) {', '.join(leaking)}; ask without revealing it."
                continue
            return self._question_record(cluster, rnd, question.question, inside, "ok", leaks, regenerations, dropped_all)
        # Out of attempts: keep the last question minus leaking targets when it is otherwise usable.
        if last is not None and last.target and word_count(last.question) <= ctx.exam.question_max_words:
            leaking = set(leaking_targets(last.question, last.target, texts, ctx.exam.leak_threshold))
            kept = [uid for uid in last.target if uid not in leaking]
            if kept:
                return self._question_record(cluster, rnd, last.question, kept, "ok", leaks, regenerations, dropped_all)
        return self._question_record(cluster, rnd, last.question if last else "", [], "no_targets", leaks, regenerations, dropped_all)

    @staticmethod
    def _question_record(
        cluster: ClusterState, rnd: int, text: str, targets: list[str], status: str,
        leaks: int, regenerations: int, dropped: list[str],
    ) -> QuestionRecord:
        return QuestionRecord(
            id=stable_id(rnd, cluster["id"], text, *targets),
            round=rnd, target="", cluster_id=cluster["id"], kind="question", text=text, targets=targets,
            qtype=question_type(text), leak_rejections=leaks, regenerations=regenerations,
            dropped_targets=sorted(set(dropped)), status=status,  # type: ignore[arg-type]
        )

    # ------------------------------------------------------------------ answers
    async def collect_answers(self, state: ExamState) -> dict[str, Any]:
        ctx, rnd = self.ctx, state["round"]
        questions = [ctx.store.get(QuestionRecord, qid) for qid in state["pending"]]
        pool = sum(len(state["pools"][t]) for t in state["active"])
        label = "collect answers" if state.get("probes_done", 0) == 0 else "collect probe answers"

        async def work(question: QuestionRecord) -> AnswerRecord:
            result = await ask_candidate(
                ctx.gateway, question.text, target=question.target, round=rnd, unit_ids=question.targets,
                stage="answer" if question.kind != "probe" else "probe_answer",
                max_words=ctx.exam.answer_max_words,
            )
            return AnswerRecord(
                id=stable_id("answer", question.id), question_id=question.id, round=rnd,
                target=question.target, text=result.text.strip(),
            )

        with ctx.progress.stage(rnd, label, len(questions), pool) as tick:
            outcomes = await run_all(questions, work, tick.advance)
        answers = [o.value for o in outcomes if o.value is not None]
        answers = await asyncio.to_thread(self._score_classic, answers)
        ctx.store.append(answers)
        update: dict[str, Any] = {"pending": [], "to_judge": [a.id for a in answers]}
        update.update(_after(outcomes, "answering"))
        return update

    def _score_classic(self, answers: list[AnswerRecord]) -> list[AnswerRecord]:
        """BLEU and embedding similarity of each answer against its targets' reference texts."""
        if not answers:
            return answers
        from examiner.metrics import bleu

        ctx = self.ctx
        references = [
            " ".join(ctx.units[uid].text for uid in ctx.store.get(QuestionRecord, a.question_id).targets)
            for a in answers
        ]
        texts = [a.text or " " for a in answers]
        bleu_scores = bleu(texts, references)
        answer_vectors = ctx.embedder.embed(texts)
        reference_vectors = ctx.embedder.embed(references)
        similarity = (answer_vectors * reference_vectors).sum(axis=1)
        return [
            a.model_copy(update={"bleu": float(b), "embedding_similarity": float(s)})
            for a, b, s in zip(answers, bleu_scores, similarity)
        ]

    # ------------------------------------------------------------------ judging
    async def judge(self, state: ExamState) -> dict[str, Any]:
        ctx, rnd = self.ctx, state["round"]
        answers = [ctx.store.get(AnswerRecord, aid) for aid in state["to_judge"]]
        pool = sum(len(state["pools"][t]) for t in state["active"])
        with ctx.progress.stage(rnd, "judge", len(answers), pool) as tick:
            outcomes = await run_all(answers, lambda a: self._judge_answer(a, rnd), tick.advance)
        verdicts: list[VerdictRecord] = []
        counters = dict(state["counters"])
        for outcome in outcomes:
            if outcome.value is None:
                continue
            records, ignored, unparseable = outcome.value
            verdicts += records
            counters["ignored_verdicts"] += ignored
            counters["unparseable_judgments"] += unparseable
        ctx.store.append(verdicts)
        update: dict[str, Any] = {
            "to_judge": [],
            "judged": [a.id for a, o in zip(answers, outcomes) if o.value is not None],
            "round_verdicts": list(state.get("round_verdicts", [])) + [v.id for v in verdicts],
            "counters": counters,
        }
        update.update(_after(outcomes, "judging"))
        return update

    async def _judge_answer(self, answer: AnswerRecord, rnd: int) -> tuple[list[VerdictRecord], int, int]:
        """Verdicts for every target of the answer's question; (records, ignored, unparseable count)."""
        ctx = self.ctx
        question = ctx.store.get(QuestionRecord, answer.question_id)
        targets = question.targets
        labels: dict[str, tuple[str, str]] = {}
        ignored = unparseable = 0
        if ctx.mode == "noref":
            result = await judge_without_reference(ctx.gateway, question.text, answer.text, round=rnd, unit_ids=targets)
            if isinstance(result.parsed, Unparseable):
                unparseable = 1
            else:
                verdict = result.value()
                labels = {uid: (verdict.type, verdict.reason) for uid in targets}
        elif ctx.judge_mode in ("reviseval", "geval"):
            from examiner.judging import exam_modes

            judge_fn = exam_modes.reviseval_unit_verdicts if ctx.judge_mode == "reviseval" else exam_modes.geval_unit_verdicts
            units = [(uid, ctx.units[uid].text) for uid in targets]
            found = await judge_fn(ctx.gateway, question=question.text, answer=answer.text, units=units, round=rnd)
            for uid, (kind, reason) in found.items():
                if uid in targets and kind != "unparseable":
                    labels[uid] = (kind, reason)
            unparseable = int(any(kind == "unparseable" for kind, _ in found.values()))
        else:
            if ctx.mode == "top":
                references = [(uid, ctx.passage_for(uid)) for uid in targets]
                stage = "judge_top"
            else:
                references = [(uid, ctx.units[uid].text) for uid in targets]
                stage = "judge"
            result = await judge_units(ctx.gateway, question.text, answer.text, references, round=rnd, stage=stage)
            if isinstance(result.parsed, Unparseable):
                unparseable = 1
            else:
                for verdict in result.value().verdicts:
                    if verdict.unit_id not in targets:
                        ignored += 1
                        log.info("ignored a verdict for %s, not a target of question %s", verdict.unit_id, question.id)
                    elif verdict.unit_id not in labels:
                        labels[verdict.unit_id] = (verdict.type, verdict.reason)
        records = []
        for uid in targets:
            kind, reason = labels.get(uid, ("unparseable", "the judge gave no usable verdict for this unit"))
            records.append(
                VerdictRecord(
                    id=stable_id("verdict", answer.id, uid), answer_id=answer.id, question_id=question.id,
                    unit_id=uid, round=rnd, target=answer.target, type=kind,  # type: ignore[arg-type]
                    reason=reason, mode=ctx.mode,  # type: ignore[arg-type]
                )
            )
        return records, ignored, unparseable

    def route_after_judge(self, state: ExamState) -> str:
        """`probe` when answers left targets unrelated and probes remain, else `update`."""
        if state.get("status", "running") != "running":
            return "finish"
        if self.ctx.mode == "top" or state.get("probes_done", 0) >= self.ctx.exam.max_probes:
            return "update"
        return "probe" if self._probe_candidates(state) else "update"

    def _probe_candidates(self, state: ExamState) -> list[tuple[AnswerRecord, list[str]]]:
        """Answers of the latest judge step with targets judged unrelated and not covered this round."""
        store = self.ctx.store
        judged = set(state.get("judged", []))
        round_ids = set(state.get("round_verdicts", []))
        verdicts = store.all(VerdictRecord)
        covered_now = {(v.target, v.unit_id) for vid in round_ids if (v := verdicts.get(vid)) and v.type in COVERED}
        missing: dict[str, list[str]] = {}
        for vid in round_ids:
            verdict = verdicts.get(vid)
            if (verdict is not None and verdict.answer_id in judged and verdict.type == "unrelated"
                    and (verdict.target, verdict.unit_id) not in covered_now):
                missing.setdefault(verdict.answer_id, []).append(verdict.unit_id)
        return [(store.get(AnswerRecord, aid), sorted(set(uids))) for aid, uids in sorted(missing.items())]

    async def probe(self, state: ExamState) -> dict[str, Any]:
        ctx, rnd = self.ctx, state["round"]
        candidates = self._probe_candidates(state)

        async def work(item: tuple[AnswerRecord, list[str]]) -> QuestionRecord | None:
            answer, uids = item
            parent = ctx.store.get(QuestionRecord, answer.question_id)
            units = [(uid, ctx.units[uid].text) for uid in uids]
            result = await write_probe(ctx.gateway, parent.text, answer.text, units, round=rnd,
                                       max_words=ctx.exam.question_max_words)
            if isinstance(result.parsed, Unparseable):
                return None
            question = result.value()
            inside = [uid for uid in dict.fromkeys(question.target) if uid in uids]
            texts = {uid: ctx.units[uid].text for uid in uids}
            leaking = set(leaking_targets(question.question, inside, texts, ctx.exam.leak_threshold))
            kept = [uid for uid in inside if uid not in leaking]
            if not kept or word_count(question.question) > ctx.exam.question_max_words:
                return None
            return QuestionRecord(
                id=stable_id("probe", parent.id, question.question, *kept), round=rnd, target=parent.target,
                cluster_id=parent.cluster_id, kind="probe", parent_id=parent.id, text=question.question,
                targets=kept, qtype=question_type(question.question), leak_rejections=int(bool(leaking)),
                dropped_targets=[uid for uid in question.target if uid not in uids],
            )

        pool = sum(len(state["pools"][t]) for t in state["active"])
        with ctx.progress.stage(rnd, "probe", len(candidates), pool) as tick:
            outcomes = await run_all(candidates, work, tick.advance)
        probes = [o.value for o in outcomes if o.value is not None]
        ctx.store.append(probes)
        counters = dict(state["counters"])
        counters["leak_rejections"] += sum(p.leak_rejections for p in probes)
        update: dict[str, Any] = {
            "pending": [p.id for p in probes],
            "probes_done": state.get("probes_done", 0) + 1,
            "counters": counters,
        }
        update.update(_after(outcomes, "probing"))
        return update

    def route_after_probe(self, state: ExamState) -> str:
        if state.get("status", "running") != "running":
            return "finish"
        return "answer" if state.get("pending") else "update"

    # ------------------------------------------------------------------ coverage and convergence
    async def update_coverage(self, state: ExamState) -> dict[str, Any]:
        ctx, rnd, exam = self.ctx, state["round"], self.ctx.exam
        store = ctx.store
        all_verdicts = store.all(VerdictRecord)
        questions = store.all(QuestionRecord)
        verdicts = sorted(
            (all_verdicts[vid] for vid in set(state.get("round_verdicts", [])) if vid in all_verdicts),
            key=lambda v: (questions[v.question_id].kind == "probe", v.id),
        )
        this_round = [q for q in questions.values() if q.round == rnd and q.status == "ok"]
        pools = {t: list(p) for t, p in state["pools"].items()}
        covered = {t: dict(c) for t, c in state["covered"].items()}
        targeted = {t: dict(c) for t, c in state["targeted"].items()}
        times = {t: dict(c) for t, c in state["times_targeted"].items()}
        unanswered = {t: list(u) for t, u in state["unanswered"].items()}
        rounds = list(state.get("rounds", []))
        active = list(state["active"])
        still_active = []
        for target in active:
            mine = [v for v in verdicts if v.target == target]
            pool_before = len(pools[target])
            newly: dict[str, str] = {}
            unrelated: set[str] = set()
            for verdict in mine:
                if verdict.type in COVERED and verdict.unit_id not in newly and verdict.unit_id not in covered[target]:
                    newly[verdict.unit_id] = verdict.id
                elif verdict.type == "unrelated":
                    unrelated.add(verdict.unit_id)
            questioned = [q for q in this_round if q.target == target]
            for uid in {uid for q in questioned if q.kind != "probe" for uid in q.targets}:
                times[target][uid] = times[target].get(uid, 0) + 1
            covered[target].update(newly)
            gone_unanswered = []
            for uid in sorted(unrelated - set(newly)):
                targeted[target][uid] = targeted[target].get(uid, 0) + 1
                if targeted[target][uid] >= exam.max_targeted:
                    gone_unanswered.append(uid)
            unanswered[target] += gone_unanswered
            removed = set(newly) | set(gone_unanswered)
            pools[target] = [uid for uid in pools[target] if uid not in removed]
            summary = RoundSummary(
                round=rnd, target=target, pool_before=pool_before, clusters=len(state["clusters"][target]),
                questions=sum(q.kind != "probe" for q in questioned), probes=sum(q.kind == "probe" for q in questioned),
                covered=len(newly), pool_after=len(pools[target]), unanswered_new=len(gone_unanswered),
            )
            rounds.append(summary.model_dump())
            share = len(newly) / pool_before if pool_before else 1.0
            if pools[target] and share >= exam.min_round_coverage:
                still_active.append(target)
            ctx.progress.note(
                f"round {rnd} · {target}: covered {len(newly)} of {pool_before} ({share:.0%}), "
                f"{len(gone_unanswered)} unanswered, {len(pools[target])} left"
            )
        update: dict[str, Any] = {
            "pools": pools, "covered": covered, "targeted": targeted, "times_targeted": times,
            "unanswered": unanswered, "rounds": rounds, "active": still_active,
        }
        if not still_active:
            emptied = all(not pools[t] for t in active)
            update["stop_reason"] = "pool empty" if emptied else "pool stopped shrinking"
        elif rnd >= exam.max_rounds or ctx.mode == "top":
            update["stop_reason"] = "one pass (top baseline)" if ctx.mode == "top" else f"max rounds ({exam.max_rounds})"
            update["active"] = []
        else:
            update["round"] = rnd + 1
        return update

    def route_after_update(self, state: ExamState) -> str:
        """`next_round` while targets remain active, else `finish`."""
        if state.get("status", "running") != "running" or not state.get("active"):
            return "finish"
        return "next_round"

    @staticmethod
    def route_or_finish(next_node: str) -> Callable[[ExamState], str]:
        """Router that continues to `next_node` unless a stop (budget, failure) was recorded."""

        def route(state: ExamState) -> str:
            return next_node if state.get("status", "running") == "running" else "finish"

        route.__name__ = f"continue_to_{next_node}"
        return route


__all__ = ["ExamContext", "ExamNodes", "stable_id"]
