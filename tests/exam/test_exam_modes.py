"""Exam modes as strategies, and the judge the exam builds from a mode, a judge method and endpoints."""

from __future__ import annotations

import numpy as np
import pytest

from examiner.core.names import EXAM_JUDGE_METHODS

from examiner.core.records import SourceRef, UnitRecord
from examiner.exam.modes import MODES, NoReference, RefEval, TopBaseline
from examiner.judging.exam_judges import (
    GEvalJudge,
    NoReferenceJudge,
    ReferenceJudge,
    RevisEvalJudge,
    exam_judge,
)
from examiner.judging.panel import Panel

UNIT = UnitRecord(id="u1", text="Quokkas are marsupials.", token_count=5,
                  sources=[SourceRef(document="d.md", passage_id="p1", start=0, end=40)])
PASSAGES = {"p1": "Quokkas are small marsupials that live on Rottnest Island."}


def test_each_mode_is_named_as_run_json_records_it() -> None:
    assert {name: type(mode) for name, mode in MODES.items()} == {
        "refeval": RefEval, "top": TopBaseline, "noref": NoReference}


def test_references_per_mode() -> None:
    assert RefEval().reference(UNIT, PASSAGES) == UNIT.text
    assert TopBaseline().reference(UNIT, PASSAGES) == PASSAGES["p1"]
    assert TopBaseline().reference(UNIT, {}) == UNIT.text
    assert not NoReference().reads_references


def test_top_asks_one_unit_at_a_time_in_one_pass_without_probes() -> None:
    top = TopBaseline()
    pool = ["a", "b", "c"]
    assert top.groups(pool, np.eye(3, dtype=np.float32), cluster_size=6, seed=0) == [["a"], ["b"], ["c"]]
    assert top.projection(pool, np.eye(3, dtype=np.float32), seed=0) == {}
    assert top.last_round(1, max_rounds=8) == "one pass (top baseline)"
    assert not top.probes


def test_refeval_clusters_the_pool_and_stops_at_max_rounds() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(12, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    pool = [f"u{i}" for i in range(12)]
    groups = RefEval().groups(pool, vectors, cluster_size=4, seed=0)
    assert sorted(uid for g in groups for uid in g) == sorted(pool) and len(groups) == 3
    assert RefEval().last_round(7, max_rounds=8) is None
    assert RefEval().last_round(8, max_rounds=8) == "max rounds (8)"


JUDGE_CLASSES = [("refeval", ReferenceJudge), ("reviseval", RevisEvalJudge), ("geval", GEvalJudge)]


def test_every_declared_judge_method_is_checked_below() -> None:
    assert [method for method, _ in JUDGE_CLASSES] == list(EXAM_JUDGE_METHODS)


@pytest.mark.parametrize("method, kind", JUDGE_CLASSES)
def test_the_exam_judge_follows_method_mode_and_endpoints(method: str, kind: type) -> None:
    gateway = object()
    one = exam_judge(gateway, method=method, reads_references=True, stage="judge_top")  # type: ignore[arg-type]
    assert isinstance(one, kind) and one.name == "judge"
    noref = exam_judge(gateway, method=method, reads_references=False, stage="judge")  # type: ignore[arg-type]
    assert isinstance(noref, NoReferenceJudge)
    panel = exam_judge(gateway, method=method, reads_references=True, stage="judge",  # type: ignore[arg-type]
                       endpoints=["a", "b", "c"])
    assert isinstance(panel, Panel) and [m.name for m in panel.members] == ["a", "b", "c"]
    assert all(isinstance(m, kind) and m.endpoint == m.name for m in panel.members)
    if kind is ReferenceJudge:
        assert one.stage == "judge_top"
