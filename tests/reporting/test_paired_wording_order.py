"""A difference's wording-aware variance does not depend on which target is A: compare puts the targets
one way round and the gate (BASE, NEW) may put them the other, and both must add the same variance.

Why a run of several rounds: round 1's clustering is recorded once, under one target, and the other
target's earliest clusters are round 2's; reading those put the units in other clusters for one order."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from examiner.exam.runner import ExamRequest, start_exam
from examiner.reporting.compare_wording import pair_wording
from examiner.reporting.paired import paired_section, paired_units
from examiner.reporting.run_reader import load_run
from tests.helpers.wording_exam import TARGETS, settings


@pytest.fixture(scope="module")
def run(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two simulated targets, three rounds, every round-1 cluster re-asked in 2 wordings with an effect."""
    folder = tmp_path_factory.mktemp("order")
    asyncio.run(start_exam(settings(2, share=1.0, wording_sd=0.8, max_rounds=3),
                           ExamRequest([str(small_corpus)], targets=TARGETS), folder, quiet=True))
    return folder


def _added(folder: Path, a: str, b: str) -> float | None:
    data = load_run(folder)
    units = paired_units(data, a, data, b, subgroups=False)
    return pair_wording(paired_section(a, b, units), units, folder, a, folder, b).added_variance


def test_swapping_the_targets_keeps_the_added_variance(run: Path) -> None:
    data = load_run(run)
    first_rounds = {t: min(r.round for r in rounds) for t, rounds in data.clusters.items() if rounds}
    assert sorted(first_rounds.values())[-1] > 1, "the run must hold a target whose earliest clusters are not round 1's"
    forward, backward = _added(run, *TARGETS), _added(run, *reversed(TARGETS))
    assert forward is not None and forward > 0
    assert backward == pytest.approx(forward, rel=1e-12)
