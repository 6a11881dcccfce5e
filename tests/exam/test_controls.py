"""Control questions (`--control-share S`): beside a seeded share of round 1's questions, one the corpus
cannot answer, answered by every target and labelled by the judge. They must leave the exam's verdicts,
outcomes and calls alone, keep their calls under the ledger stage `control`, write one record per
(control, target), resume without asking again, and reproduce the simulated target's known stance."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from examiner.core.config import EndpointSpec, Settings
from examiner.core.control_records import ControlRecord
from examiner.core.records import UnitOutcome, VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.nodes.controls import choose_clusters, control_kind
from examiner.exam.runner import ExamRequest, resume_exam, start_exam
from examiner.llm.ledger import aggregate, answered
from examiner.simulator.behaviours import unit_category
from tests.helpers.killing import kill_examiner_when
from tests.helpers.simulated_exam import PROFILE, ROLES

TARGETS = ["a", "b", "c"]
POLICIES = {"a": "answers", "b": "declines", "c": "knowledge"}


def settings(share: float) -> Settings:
    endpoints = {"sim": EndpointSpec(provider="simulated", model="sim-sim", max_concurrency=16,
                                     options={"knowledge": PROFILE})}
    endpoints |= {name: EndpointSpec(provider="simulated", model=f"sim-{name}", max_concurrency=16,
                                     options={"knowledge": PROFILE, "false_premise": POLICIES[name]})
                  for name in TARGETS}
    return Settings(endpoints=endpoints, roles={r: "sim" for r in ROLES},
                    exam={"max_rounds": 1, "control_share": share, "self_check_share": 0.0})


def stage_calls(folder: Path) -> dict[str, int]:
    return {r["stage"]: r["calls"] for r in aggregate(answered(RunDir(folder).ledger_records()), by=("stage",))}


async def test_controls_stay_beside_the_exam_and_catch_each_stance(small_corpus: Path, tmp_path: Path) -> None:
    with_controls, without = tmp_path / "with", tmp_path / "without"
    for folder, share in ((with_controls, 0.5), (without, 0.0)):
        await start_exam(settings(share), ExamRequest([str(small_corpus)], targets=TARGETS), folder, quiet=True,
                         report=False)
    for model in (VerdictRecord, UnitOutcome):
        assert [{k: v.model_dump() for k, v in RunDir(d).records(model).items()}
                for d in (with_controls, without)] == [{k: v.model_dump() for k, v in RunDir(without).records(model).items()}] * 2
    records = RunDir(with_controls).records(ControlRecord)
    clusters = {r.cluster_id for r in records.values()}
    assert len(clusters) >= 2 and len(records) == len(clusters) * len(TARGETS)
    calls = stage_calls(with_controls)
    # one examiner call per control, then an answer and a judgment per target
    assert calls.pop("control") == len(clusters) * (1 + 2 * len(TARGETS))
    assert calls == stage_calls(without)
    assert not (without / "controls.jsonl").exists()
    by_target = {t: [r for r in records.values() if r.target == t] for t in TARGETS}
    assert {r.label for r in by_target["a"]} == {"accepted_premise"}
    assert {r.label for r in by_target["b"]} == {"declined_or_corrected"}
    for r in by_target["c"]:  # by knowledge: it corrects what it knows, goes along with the rest
        known = unit_category(0, "sim-c", r.unit_ids[0], PROFILE) in ("known", "declined")
        assert r.label == ("declined_or_corrected" if known else "accepted_premise")
    assert {r.kind for r in records.values()} <= {"false_premise", "swapped_entity", "out_of_corpus"}
    assert all(r.kind == control_kind(0, r.cluster_id) for r in records.values())


def test_controls_survive_kill_and_resume_without_paying_twice(small_corpus: Path, tmp_path: Path) -> None:
    slow = settings(0.5)
    for spec in slow.endpoints.values():
        spec.options["latency_s"] = 0.1
    reference = tmp_path / "reference"
    asyncio.run(start_exam(slow, ExamRequest([str(small_corpus)], targets=TARGETS), reference, quiet=True,
                           report=False))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(slow.model_dump(mode="json")), encoding="utf-8")
    killed = tmp_path / "killed"
    ledger = killed / "ledger.jsonl"
    kill_examiner_when(["run", str(small_corpus), "--config", str(config), "--out", str(killed), "--quiet",
                        *[arg for t in TARGETS for arg in ("--target", t)]],
                       lambda: ledger.exists() and '"stage":"control"' in ledger.read_text(encoding="utf-8"),
                       timeout_s=300, too_late="the run finished before its controls could be killed")
    before = RunDir(killed).ledger_records()
    paid_before = {r.request_id for r in answered(before) if not r.cache_hit}
    info = asyncio.run(resume_exam(killed, quiet=True, report=False))
    assert info.status == "completed", info.stop_reason
    expected = {r.id: r.label for r in RunDir(reference).records(ControlRecord).values()}
    assert {r.id: r.label for r in RunDir(killed).records(ControlRecord).values()} == expected
    resumed = [r for r in answered(RunDir(killed).ledger_records()[len(before):]) if not r.cache_hit]
    assert not paid_before & {r.request_id for r in resumed}


def test_the_chosen_clusters_are_seeded_and_at_least_two() -> None:
    ids = [f"c{i}" for i in range(20)]
    assert choose_clusters(ids, 0.25, 7) == choose_clusters(reversed(ids), 0.25, 7)
    assert len(choose_clusters(ids, 0.25, 7)) == 5
    assert len(choose_clusters(ids, 0.01, 7)) == 2
    assert choose_clusters(ids, 0.0, 7) == []
    assert choose_clusters(ids, 0.25, 7) != choose_clusters(ids, 0.25, 8)


def test_the_estimate_pilot_asks_no_control() -> None:
    """Controls come once, after the last round; the estimate's per-round extrapolation would count them in
    every predicted round, so its pilot asks none (and a note says what they add)."""
    from examiner.exam.estimate import pilot_settings

    assert settings(0.5).exam.control_share == 0.5
    assert pilot_settings(settings(0.5), 1).exam.control_share == 0.0
    assert pilot_settings(settings(0.5), 3).exam.control_share == 0.0
