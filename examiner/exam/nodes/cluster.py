"""Node `cluster`: group each target's uncovered pool into this round's clusters (the mode decides how)."""

from __future__ import annotations

import asyncio
from typing import Any

from examiner.core.records import ClusterRecord, ClusterRound
from examiner.exam.nodes.context import ExamContext, stable_id
from examiner.exam.state import ClusterState, ExamState


async def cluster(ctx: ExamContext, state: ExamState) -> dict[str, Any]:
    """Clusters per active target; targets with the same pool share one clustering (same paper).
    Each target's book gets the round's cluster of each unit clustered."""
    rnd = state["round"]
    clusters: dict[str, str] = {}
    books = dict(state["books"])
    shared: dict[tuple[str, ...], list[ClusterState]] = {}
    for target in state["active"]:
        book = ctx.book(state, target)
        pool = book["pool"]
        if tuple(pool) not in shared:
            with ctx.progress.stage(rnd, "cluster", 1, len(pool)):
                shared[tuple(pool)] = await asyncio.to_thread(cluster_pool, ctx, pool, rnd, target)
        groups = shared[tuple(pool)]
        unit_cluster = dict(book["unit_cluster"])
        for group in groups:
            unit_cluster.update({uid: group["id"] for uid in group["members"]})
        clusters[target] = ctx.keep(groups)
        books[target] = ctx.keep({**book, "unit_cluster": unit_cluster})
    return {"clusters": clusters, "books": books, "probes_done": 0, "round_verdicts": ctx.keep([])}


def cluster_pool(ctx: ExamContext, pool: list[str], rnd: int, target: str) -> list[ClusterState]:
    """One pool's clusters (center first), written to clusters/<target>/round-N.json with the 2-D map."""
    vectors = ctx.vectors(pool)
    groups = ctx.mode.groups(pool, vectors, ctx.exam.cluster_size, ctx.exam.seed + rnd)
    clusters = [
        ClusterState(id=f"r{rnd}-c{i}-{stable_id(*members)[:6]}", center=members[0], members=members)
        for i, members in enumerate(groups)
    ]
    ctx.store.write_clusters(
        ClusterRound(
            round=rnd, target=target, k=len(clusters),
            clusters=[ClusterRecord(id=c["id"], center=c["center"], members=c["members"]) for c in clusters],
            projection=ctx.mode.projection(pool, vectors, ctx.exam.seed),
        )
    )
    return clusters
