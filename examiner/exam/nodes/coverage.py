"""Node `update_coverage`: the round's verdicts take covered units out of each target's pool; then the
exam goes on, or stops (pool empty, pool stopped shrinking, or the mode's last round)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from examiner.core.labels import COVERING, Verdict
from examiner.core.records import QuestionRecord, RoundSummary, VerdictRecord
from examiner.exam.nodes.context import ExamContext, running
from examiner.exam.nodes.examine import Asked
from examiner.exam.state import CoverageBook, ExamState


@dataclass
class TargetRound:
    """One target's bookkeeping through the update (copies of its state, changed in place)."""

    pool: list[str]
    covered: dict[str, str]
    targeted: dict[str, int]
    times: dict[str, int]
    unanswered: list[str]
    unit_cluster: dict[str, str] = field(default_factory=dict)
    """Not changed by the update (shared with the book it came from)."""
    newly: dict[str, str] = field(default_factory=dict)
    """Units covered this round -> the verdict that covered them."""
    gone_unanswered: list[str] = field(default_factory=list)
    """Units judged unrelated for the `max_targeted`-th time this round."""

    def book(self) -> CoverageBook:
        """The target's coverage book after the update."""
        return {"pool": self.pool, "covered": self.covered, "targeted": self.targeted, "times": self.times,
                "unit_cluster": self.unit_cluster, "unanswered": self.unanswered}


async def update_coverage(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Apply the round's verdicts per target, note the round, and decide whether another one follows."""
    rnd = state["round"]
    verdicts = round_verdicts(ctx, state)
    questions = [Asked.of(q) for q in ctx.store.index(QuestionRecord).values() if q.round == rnd and q.status == "ok"]
    per_target = {t: target_round(ctx.book(state, t)) for t in state["books"]}
    rounds, still_active = list(state.get("rounds", [])), []
    for target in state["active"]:
        now, pool_before = per_target[target], len(per_target[target].pool)
        questioned = [q for q in questions if q.target == target]
        apply_verdicts(now, [v for v in verdicts if v.target == target], ctx.exam.max_targeted)
        count_targeting(now, questioned)
        clusters = len(ctx.clusters(state, target))
        rounds.append(round_summary(rnd, target, clusters, now, pool_before, questioned).model_dump())
        share = len(now.newly) / pool_before if pool_before else 1.0
        if now.pool and share >= ctx.exam.min_round_coverage:
            still_active.append(target)
        ctx.progress.note(
            f"round {rnd} · {target}: covered {len(now.newly)} of {pool_before} ({share:.0%}), "
            f"{len(now.gone_unanswered)} unanswered, {len(now.pool)} left"
        )
    update: dict[str, Any] = {
        "books": {t: ctx.keep(n.book()) for t, n in per_target.items()},
        "pool_left": {t: len(n.pool) for t, n in per_target.items()},
        "rounds": rounds, "active": still_active,
    }
    return update | next_round(ctx, state, still_active, per_target)


class Judged(NamedTuple):
    """What the update reads of a verdict: the fields, not the decoded record (1.3 KB; round 1 of a
    200,000-unit exam has about 240,000 verdicts)."""

    id: str
    unit_id: str
    target: str
    verdict: str
    probe: bool
    """Whether its question is a probe."""


def round_verdicts(ctx: ExamContext, state: ExamState) -> list[Judged]:
    """This round's verdicts, questions before probes, then by id (the first covering verdict wins)."""
    stored = ctx.store.index(VerdictRecord)
    questions = ctx.store.index(QuestionRecord)
    judged = (Judged(v.id, v.unit_id, v.target, v.verdict, questions[v.question_id].kind == "probe")
              for v in (stored[vid] for vid in set(ctx.work(state, "round_verdicts")) if vid in stored))
    return sorted(judged, key=lambda v: (v.probe, v.id))


def target_round(book: CoverageBook) -> TargetRound:
    return TargetRound(
        pool=list(book["pool"]), covered=dict(book["covered"]), targeted=dict(book["targeted"]),
        times=dict(book["times"]), unanswered=list(book["unanswered"]), unit_cluster=book["unit_cluster"],
    )


def apply_verdicts(now: TargetRound, verdicts: Sequence[VerdictRecord | Judged], max_targeted: int) -> None:
    """Covered units leave the pool; a unit judged unrelated `max_targeted` times leaves it unanswered.
    Unscored verdicts change nothing: the unit stays in the pool."""
    unrelated: set[str] = set()
    for verdict in verdicts:
        if verdict.verdict in COVERING:
            if verdict.unit_id not in now.newly and verdict.unit_id not in now.covered:
                now.newly[verdict.unit_id] = verdict.id
        elif verdict.verdict == Verdict.UNRELATED:
            unrelated.add(verdict.unit_id)
    now.covered.update(now.newly)
    for uid in sorted(unrelated - set(now.newly)):
        now.targeted[uid] = now.targeted.get(uid, 0) + 1
        if now.targeted[uid] >= max_targeted:
            now.gone_unanswered.append(uid)
    now.unanswered += now.gone_unanswered
    removed = set(now.newly) | set(now.gone_unanswered)
    now.pool = [uid for uid in now.pool if uid not in removed]


def count_targeting(now: TargetRound, questioned: Sequence[QuestionRecord | Asked]) -> None:
    """How often each unit was a target of a (non-probe) question."""
    for uid in {uid for q in questioned if q.kind != "probe" for uid in q.targets}:
        now.times[uid] = now.times.get(uid, 0) + 1


def round_summary(
    rnd: int, target: str, clusters: int, now: TargetRound, pool_before: int,
    questioned: Sequence[QuestionRecord | Asked],
) -> RoundSummary:
    return RoundSummary(
        round=rnd, target=target, pool_before=pool_before, clusters=clusters,
        questions=sum(q.kind != "probe" for q in questioned), probes=sum(q.kind == "probe" for q in questioned),
        covered=len(now.newly), pool_after=len(now.pool), unanswered_new=len(now.gone_unanswered),
    )


def next_round(
    ctx: ExamContext, state: ExamState, still_active: list[str], per_target: dict[str, TargetRound]
) -> dict[str, Any]:
    """Another round, or the stop reason: pool empty, pool stopped shrinking, the mode's last round."""
    rnd = state["round"]
    if not still_active:
        emptied = all(not per_target[t].pool for t in state["active"])
        return {"stop_reason": "pool empty" if emptied else "pool stopped shrinking"}
    reason = ctx.mode.last_round(rnd, ctx.exam.max_rounds)
    if reason is not None:
        return {"stop_reason": reason, "active": []}
    return {"round": rnd + 1}


def route_after_update(ctx: ExamContext, state: ExamState) -> str:
    """`next_round` while targets remain active, else `finish`."""
    if not running(state) or not state.get("active"):
        return "finish"
    return "next_round"
