"""Maps stay small at any pool size: a round keeps 2-D coordinates for at most MAX_PROJECTED units of its
pool, and a map draws at most MAP_POINTS of them (whole clusters, seeded) and says "N of M points shown"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from examiner.core.records import ClusterRecord, ClusterRound
from examiner.exam import modes
from examiner.exam.modes import RefEval
from examiner.reporting import figures as fg


def synthetic_round(n: int, cluster_size: int = 6, rnd: int = 1) -> ClusterRound:
    ids = [f"u{i:06d}" for i in range(n)]
    clusters = [ClusterRecord(id=f"c{c}", center=ids[c + 1 if c + 1 < n else c], members=ids[c:c + cluster_size])
                for c in range(0, n, cluster_size)]
    projection = {uid: (float(i % 300), float(i // 300)) for i, uid in enumerate(ids)}
    return ClusterRound(round=rnd, target="alpha", k=len(clusters), clusters=clusters, projection=projection)


def test_a_pool_under_the_cap_is_drawn_whole() -> None:
    data = synthetic_round(600)
    sample = fg.map_sample(data, cap=1000)
    assert sample.shown == sample.total == 600 and sample.note == ""
    assert [j for j, _ in sample.clusters] == list(range(100))


def test_a_large_pool_draws_the_cap_in_whole_clusters_with_their_centers() -> None:
    data = synthetic_round(60_000)
    sample = fg.map_sample(data, seed=3)
    assert fg.MAP_POINTS - 6 < sample.shown <= fg.MAP_POINTS and sample.total == 60_000  # clusters of 6
    assert sample.shown == sum(len(m) for _, m in sample.clusters)
    assert sample.note == f"{sample.shown:,} of 60,000 points shown"
    for j, members in sample.clusters:  # whole clusters: every drawn cluster keeps its starred center
        assert members == data.clusters[j].members and data.clusters[j].center in members
    assert fg.map_sample(data, seed=3) == sample  # same seed, same map
    assert fg.map_sample(data, seed=4) != sample


def test_the_map_figure_draws_the_cap_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: dict[str, object] = {}

    def keep(fig, path: Path) -> Path:  # noqa: ANN001 - a matplotlib Figure
        ax = fig.axes[0]
        drawn["title"] = ax.get_title()
        drawn["points"] = sum(len(c.get_offsets()) for c in ax.collections)
        return path

    monkeypatch.setattr(fg, "_save", keep)
    data = synthetic_round(30_000)
    fg.map_figure([data], "alpha", tmp_path / "map.png", cap=500)
    sample = fg.map_sample(data, cap=500)
    assert 494 < sample.shown <= 500
    assert drawn["points"] == sample.shown + len(sample.clusters)  # points and one star per cluster
    assert f"{sample.shown} of 30,000 points shown" in str(drawn["title"])
    fg.map_figure([synthetic_round(300)], "alpha", tmp_path / "map.png")
    assert "shown" not in str(drawn["title"]) and drawn["points"] == 300 + 50


def test_a_large_pool_keeps_a_seeded_sample_of_coordinates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modes, "MAX_PROJECTED", 200)
    pool = [f"u{i}" for i in range(1000)]
    vectors = np.random.default_rng(0).normal(size=(1000, 8)).astype(np.float32)
    coords = RefEval().projection(pool, vectors, seed=5)
    assert len(coords) == 200 and set(coords) <= set(pool)
    assert RefEval().projection(pool, vectors, seed=5) == coords
    small = RefEval().projection(pool[:150], vectors[:150], seed=5)
    assert list(small) == pool[:150]  # under the limit: every unit, as before
