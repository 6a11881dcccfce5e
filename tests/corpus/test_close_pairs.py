"""The near-duplicate search: exactly the pairs a full comparison finds, however the work is cut."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.corpus import close_pairs as module
from examiner.corpus.close_pairs import close_pairs
from examiner.corpus.units import near_duplicate_groups, unit_rows


def every_pair(x: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The reference: all n * n dot products in float64."""
    x64 = x.astype(np.float64)
    first, second = np.nonzero(np.triu(x64 @ x64.T >= threshold, k=1))
    return first, second


def clustered_rows(seed: int, n: int = 3000, d: int = 48) -> np.ndarray:
    """Unit rows in topics (as sentence embeddings are), with paraphrase-like copies at many distances,
    some a hair either side of the threshold 0.95."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((30, d))
    base = topics[rng.integers(0, 30, n // 2)] + 0.6 * rng.standard_normal((n // 2, d))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    noise = rng.standard_normal((n // 2, d))
    noise -= (noise * base).sum(axis=1, keepdims=True) * base  # orthogonal to its base row
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    cosine = rng.choice([0.90, 0.94, 0.95 - 1e-7, 0.95, 0.95 + 1e-7, 0.97, 0.999], n // 2)[:, None]
    twins = cosine * base + np.sqrt(1 - cosine**2) * noise
    return unit_rows(np.concatenate([base, twins]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_pairs_are_exactly_those_of_a_full_comparison(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "CELLS_FROM", 100 if seed else 10**9)  # cells, and one cell
    x = clustered_rows(seed)
    first, second = close_pairs(x, 0.95)
    expected = every_pair(x, 0.95)
    assert len(expected[0]) > 500  # enough pairs, many of them within 1e-6 of the threshold
    assert np.array_equal(first, expected[0]) and np.array_equal(second, expected[1])


def test_pairs_across_cell_borders_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dense points on a sphere in 3-D: thousands of close pairs straddle the k-means cells' borders."""
    monkeypatch.setattr(module, "CELLS_FROM", 100)
    x = unit_rows(np.random.default_rng(5).standard_normal((4000, 3)))
    first, second = close_pairs(x, 0.95)
    expected = every_pair(x, 0.95)
    assert len(expected[0]) > 100_000
    assert np.array_equal(first, expected[0]) and np.array_equal(second, expected[1])


def test_the_answer_does_not_depend_on_projection_seed_or_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "CELLS_FROM", 100)
    x = clustered_rows(3, n=2000)
    expected = every_pair(x, 0.9)
    for dims, seed in [(2, 0), (8, 5), (48, 1)]:
        first, second = close_pairs(x, 0.9, dims=dims, seed=seed)
        assert np.array_equal(first, expected[0]) and np.array_equal(second, expected[1])
    monkeypatch.setattr(module, "BLOCK_VALUES", 4096)
    monkeypatch.setattr(module, "ROWS_AT_ONCE", 7)
    first, second = close_pairs(x, 0.9)
    assert np.array_equal(first, expected[0]) and np.array_equal(second, expected[1])


def test_few_rows_zero_rows_and_low_thresholds() -> None:
    empty = np.zeros((0, 4), np.float32)
    assert [len(a) for a in close_pairs(empty, 0.95)] == [0, 0]
    assert [len(a) for a in close_pairs(np.ones((1, 4), np.float32) / 2, 0.95)] == [0, 0]
    x = unit_rows(np.array([[1, 0, 0], [0, 0, 0], [1, 0.01, 0], [0, 1, 0], [0, 0, 0]], np.float32))
    assert [a.tolist() for a in close_pairs(x, 0.95)] == [[0], [2]]
    for threshold in (0.0, -1.0, 0.5):  # zero rows meet everything at or below 0
        expected = every_pair(x, threshold)
        assert [a.tolist() for a in close_pairs(x, threshold)] == [a.tolist() for a in expected]
    with pytest.raises(ValueError, match="length at most 1"):
        close_pairs(2 * x, 0.95)


def test_near_duplicate_groups_are_the_components_of_the_pairs() -> None:
    import networkx as nx

    x = clustered_rows(4, n=1000)
    third = x[:100] + 0.02 * np.random.default_rng(4).standard_normal((100, x.shape[1]))  # triples, chains
    x = unit_rows(np.concatenate([x, third]))
    graph = nx.Graph()
    graph.add_nodes_from(range(len(x)))
    graph.add_edges_from(zip(*(a.tolist() for a in every_pair(x, 0.95))))
    expected = sorted((sorted(c) for c in nx.connected_components(graph)), key=lambda g: g[0])
    assert any(len(g) > 2 for g in expected)
    assert near_duplicate_groups(x, 0.95, normalised=True) == expected


def test_the_probed_search_returns_only_qualifying_pairs_and_here_all_of_them() -> None:
    """Above EXACT_UP_TO the search probes nearby cells: what it returns meets the threshold in float64,
    and on topic-clustered rows (paraphrases a hair either side of 0.95) the default probes miss nothing, while
    a single probe (its own cell only) misses pairs split by a cell border but adds none."""
    x = clustered_rows(6, n=6000)
    expected = set(zip(*(a.tolist() for a in every_pair(x, 0.95))))
    probed = set(zip(*(a.tolist() for a in module.probed_close_pairs(x, 0.95))))
    assert len(expected) > 1000 and probed == expected
    one_cell = set(zip(*(a.tolist() for a in module.probed_close_pairs(x, 0.95, probes=1))))
    assert one_cell < expected  # some pairs straddle cells: the probes beyond its own cell find them


def test_close_pairs_probes_only_above_its_exact_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    x = clustered_rows(7, n=2000)
    calls: list[int] = []
    real = module.probed_close_pairs

    def counted(rows: np.ndarray, threshold: float, **kwargs: int) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(rows))
        return real(rows, threshold, **kwargs)

    monkeypatch.setattr(module, "probed_close_pairs", counted)
    expected = every_pair(x, 0.95)
    for limit in (None, 2000, 1999):
        first, second = close_pairs(x, 0.95, exact_up_to=limit)
        assert np.array_equal(first, expected[0]) and np.array_equal(second, expected[1])
    assert calls == [2000]  # only the call whose limit the rows pass
    first, _ = close_pairs(x, -0.5, exact_up_to=10)  # no cell map for thresholds that link far rows
    assert len(first) == len(every_pair(x, -0.5)[0]) and calls == [2000]
    with pytest.raises(ValueError, match="above 0"):
        module.probed_close_pairs(x, 0.0)


def test_the_exam_setting_reaches_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """exam.dedup_exact_up_to is what close_pairs is given: the merge probes past it, and the units it
    keeps are the same here (no pair missed on these rows)."""
    from examiner.core.config import ExamSettings
    from examiner.corpus.units import Source, make_unit, merge_near_duplicates

    assert ExamSettings().dedup_exact_up_to == module.EXACT_UP_TO
    x = clustered_rows(8, n=1200)
    units = [make_unit(f"unit {i}", [Source(document="d.txt", passage_id=f"p{i}", start=0, end=6)])
             for i in range(len(x))]
    seen: list[int | None] = []
    real = module.close_pairs

    def spied(rows: np.ndarray, threshold: float, **kwargs: int | None) -> tuple[np.ndarray, np.ndarray]:
        seen.append(kwargs.get("exact_up_to"))
        return real(rows, threshold, **kwargs)

    monkeypatch.setattr("examiner.corpus.units.close_pairs", spied)
    exact = merge_near_duplicates(units, x, 0.95)
    probed = merge_near_duplicates(units, x, 0.95, exact_up_to=ExamSettings(dedup_exact_up_to=100).dedup_exact_up_to)
    assert seen == [None, 100]
    assert len(exact) < len(units) and probed == exact
