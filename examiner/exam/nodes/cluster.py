"""Node `cluster`: group each target's uncovered pool into this round's clusters (the mode decides how)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from examiner.core.records import ClusterRecord, ClusterRound
from examiner.exam.nodes.context import ExamContext, stable_id
from examiner.exam.state import ClusterState, ExamState


async def cluster(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Clusters per active target; targets with the same pool share one clustering (same paper).
    Each target's book gets the round's cluster of each unit clustered. A round-1 state that arrives with
    a target's clusters set keeps them: the estimate's pilot starts so, with its sample of the run's own
    round-1 clusters (a run starts with none)."""
    rnd = state["round"]
    chosen = state["clusters"] if rnd == 1 else {}
    clusters: dict[str, str] = {}
    books = dict(state["books"])
    shared: dict[tuple[str, ...], list[ClusterState]] = {}
    for target in state["active"]:
        book = ctx.book(state, target)
        pool = book["pool"]
        if tuple(pool) not in shared:
            preset = ctx.clusters(state, target) if target in chosen else None
            with ctx.progress.stage(rnd, "cluster", 1, len(pool)):
                shared[tuple(pool)] = await asyncio.to_thread(cluster_pool, ctx, pool, rnd, target, preset)
        groups = shared[tuple(pool)]
        unit_cluster = dict(book["unit_cluster"])
        for group in groups:
            unit_cluster.update({uid: group["id"] for uid in group["members"]})
        clusters[target] = ctx.keep(groups)
        books[target] = ctx.keep({**book, "unit_cluster": unit_cluster})
    return {"clusters": clusters, "books": books, "probes_done": 0, "round_verdicts": ctx.keep([])}


def round_clusters(ctx: ExamContext, pool: list[str], rnd: int,
                   vectors: np.ndarray | None = None) -> list[ClusterState]:
    """The clusters the mode makes of `pool` in round `rnd` (center first), with their ids: a function of
    the pool, the round and the seed alone, so the estimate's pilot can take the run's own round-1 clusters.
    `vectors`: the pool's rows (ctx.vectors(pool)) when the caller has them already."""
    if vectors is None:
        vectors = ctx.vectors(pool)
    groups = ctx.mode.groups(pool, vectors, ctx.exam.cluster_size, ctx.exam.seed + rnd)
    return [ClusterState(id=f"r{rnd}-c{i}-{stable_id(*members)[:6]}", center=members[0], members=members)
            for i, members in enumerate(groups)]


def cluster_pool(ctx: ExamContext, pool: list[str], rnd: int, target: str,
                 preset: list[ClusterState] | None = None) -> list[ClusterState]:
    """One pool's clusters (center first; `preset` when given), written to clusters/<target>/round-N.json
    with the 2-D map."""
    vectors = ctx.vectors(pool)  # once: the pool's rows held twice were 1.5 KB a unit more at round 1's peak
    clusters = preset if preset is not None else round_clusters(ctx, pool, rnd, vectors)
    ctx.store.write_clusters(
        ClusterRound(
            round=rnd, target=target, k=len(clusters),
            clusters=[ClusterRecord(id=c["id"], center=c["center"], members=c["members"]) for c in clusters],
            projection=ctx.mode.projection(pool, vectors, ctx.exam.seed),
        )
    )
    return clusters
