"""The judge self-check: a seeded sample of judged answers marked again with the units reordered.

A simulated judge with `judge_noise` p flips each unit's label with probability p, drawn afresh for every
distinct request (the reordered request is another request), to one of the two other labels. Two
markings of a unit then agree when neither flipped, or both flipped to the same label:
(1 - p)^2 + p^2 / 2. The self-check must recover that, cost nothing of the exam's own calls, show under
its own ledger stage and survive kill -9 and resume without paying twice.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import yaml

from examiner.core.config import EndpointSpec, Settings
from examiner.core.records import SelfCheckRecord, VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.health import exam_health
from examiner.core.records import SELF_CHECK_STAGE
from examiner.exam.nodes.self_check import choose_sample, other_order, sample_size
from examiner.exam.runner import ExamRequest, resume_exam, start_exam
from examiner.llm.ledger import aggregate, answered
from tests.helpers.killing import kill_examiner_when
from tests.helpers.simulated_exam import PROFILE, ROLES, sim_settings


def noisy_settings(noise: float, *, share: float = 1.0, latency: float = 0.0, max_rounds: int = 3) -> Settings:
    spec = EndpointSpec(provider="simulated", model="sim", price_input_per_1m=2.5, price_output_per_1m=10.0,
                        max_concurrency=16, options={"knowledge": PROFILE, "judge_noise": noise, "latency_s": latency})
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ROLES},
                    exam={"max_rounds": max_rounds, "self_check_share": share})


def expected_agreement(noise: float) -> float:
    return (1 - noise) ** 2 + noise ** 2 / 2


def noise_for(agreement: float) -> float:
    """The judge_noise whose expected self-agreement is `agreement` (the smaller root)."""
    return (2 - math.sqrt(4 - 6 * (1 - agreement))) / 3


async def test_known_consistency_is_recovered(tmp_path: Path) -> None:
    noise = noise_for(0.8)
    assert abs(expected_agreement(noise) - 0.8) < 1e-9
    await start_exam(noisy_settings(noise), ExamRequest(["corpora/harbor-water"]),
                     tmp_path, quiet=True, report=False)
    agreement = exam_health(RunDir(tmp_path).read()).self_agreement
    assert agreement.compared >= 200, agreement.compared
    assert abs(agreement.value - 0.8) <= 0.05, agreement
    assert agreement.low is not None and agreement.low < agreement.value < agreement.high


async def test_self_check_has_its_own_stage_and_leaves_the_exam_alone(small_corpus: Path, tmp_path: Path) -> None:
    """With and without the self-check: the same verdicts, the same exam calls; the extra calls are all
    under stage self_check, one per re-judged answer."""
    with_check, without = tmp_path / "with", tmp_path / "without"
    await start_exam(noisy_settings(0.1, share=0.3), ExamRequest([str(small_corpus)]), with_check, quiet=True,
                     report=False)
    await start_exam(noisy_settings(0.1, share=0.0), ExamRequest([str(small_corpus)]), without, quiet=True,
                     report=False)
    verdicts = [{k: v.model_dump() for k, v in RunDir(d).records(VerdictRecord).items()} for d in (with_check, without)]
    assert verdicts[0] == verdicts[1]
    stages = [{r["stage"]: r["calls"] for r in aggregate(answered(RunDir(d).ledger_records()), by=("stage",))}
              for d in (with_check, without)]
    checks = RunDir(with_check).records(SelfCheckRecord)
    assert stages[0].pop(SELF_CHECK_STAGE) == len(checks) > 0
    assert stages[0] == stages[1] and SELF_CHECK_STAGE not in stages[1]
    assert not RunDir(without).records(SelfCheckRecord)


def test_sample_is_seeded_and_reorders() -> None:
    assert sample_size(100, 0.05, 20) == 20 and sample_size(1000, 0.05, 20) == 50
    assert sample_size(10, 0.05, 20) == 10 and sample_size(100, 0.0, 20) == 0
    ids = [f"a{i}" for i in range(50)]
    assert choose_sample(ids, 5, 0) == choose_sample(list(reversed(ids)), 5, 0)
    assert choose_sample(ids, 5, 0) != choose_sample(ids, 5, 1)
    for n in (2, 3, 6):
        units = [f"u{i}" for i in range(n)]
        order = other_order(units, 0, "a1")
        assert order != units and sorted(order) == units and order == other_order(units, 0, "a1")


def test_self_check_survives_kill_and_resume_without_paying_twice(small_corpus: Path, tmp_path: Path) -> None:
    settings = noisy_settings(0.2, latency=0.1)
    reference = tmp_path / "reference"
    asyncio.run(start_exam(settings, ExamRequest([str(small_corpus)]), reference, quiet=True, report=False))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
    killed = tmp_path / "killed"
    ledger = killed / "ledger.jsonl"
    kill_examiner_when(["run", str(small_corpus), "--config", str(config), "--out", str(killed), "--quiet"],
                       lambda: ledger.exists() and f'"stage":"{SELF_CHECK_STAGE}"' in ledger.read_text(encoding="utf-8"),
                       timeout_s=300, too_late="the run finished before its self-check could be killed")
    before = RunDir(killed).ledger_records()
    paid_before = {r.request_id for r in answered(before) if not r.cache_hit}

    info = asyncio.run(resume_exam(killed, quiet=True, report=False))
    assert info.status == "completed", info.stop_reason
    expected = {r.id: r.labels for r in RunDir(reference).records(SelfCheckRecord).values()}
    assert {r.id: r.labels for r in RunDir(killed).records(SelfCheckRecord).values()} == expected
    resumed = [r for r in answered(RunDir(killed).ledger_records()[len(before):]) if not r.cache_hit]
    assert not paid_before & {r.request_id for r in resumed}
    assert exam_health(RunDir(killed).read()).self_agreement == exam_health(RunDir(reference).read()).self_agreement


async def test_no_reference_mode_has_nothing_to_reorder(small_corpus: Path, tmp_path: Path) -> None:
    await start_exam(sim_settings(max_rounds=2), ExamRequest([str(small_corpus)], mode="noref"), tmp_path, quiet=True,
                     report=False)
    assert not RunDir(tmp_path).records(SelfCheckRecord)
    health = exam_health(RunDir(tmp_path).read())
    check = next(c for c in health.checks if c.name == "self_agreement")
    assert check.status == "info" and "not measured" in check.detail
    assert json.dumps(health.to_dict())  # the report can hold it
