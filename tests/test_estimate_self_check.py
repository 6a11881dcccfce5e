"""The judge self-check in `examiner estimate`: its own term (the node's sample size of the predicted
answers it may draw, times the pilot's tokens per re-judgment), not usage extrapolated per unit. Its
size is a floor (self_check_min answers), not a share, so a pilot that re-judged all of its few answers
says little about the full run's count by scaling."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from test_exam import sim_settings

from examiner.core.records import SELF_CHECK_STAGE
from examiner.core.rundir import RunDir
from examiner.exam.estimate import (FALLBACK_SPREAD, MIN_SELF_CHECK_CALLS, SelfCheckPilot, _self_check_pilot,
                                    _self_check_usage, estimate_exam, extrapolate)
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.ledger import answered

HANDBOOK = "corpora/examiner-handbook"


def _judge_calls(estimate_figures: list) -> float:  # type: ignore[type-arg]
    return sum(u.calls.value for u in estimate_figures if u.role == "judge")


def test_floor_sized_self_check_is_predicted_by_the_nodes_rule(tmp_path: Path) -> None:
    """A 2-cluster pilot re-judges all of its few answers (fewer than the floor of 20); the full run
    re-judges 20. Extrapolating the pilot's self-check calls per unit predicts the pilot's count scaled by
    the corpus; the estimate predicts the node's sample size, and its judge row moves by exactly that when
    the self-check is switched off (usage scaled from the pilot's ledger would not move at all)."""
    settings = sim_settings(max_rounds=8)
    pilot = tmp_path / "pilot"
    estimate = asyncio.run(estimate_exam(settings, ExamRequest([HANDBOOK]), pilot, clusters=2))
    pilot_checks = [r for r in answered(RunDir(pilot).read_ledger()) if r.get("stage") == SELF_CHECK_STAGE]
    assert MIN_SELF_CHECK_CALLS <= len(pilot_checks) < settings.exam.self_check_min, "the floor dominates"

    full = tmp_path / "full"
    asyncio.run(start_exam(settings, ExamRequest([HANDBOOK]), full, quiet=True, report=False))
    full_checks = sum(1 for r in answered(RunDir(full).read_ledger()) if r.get("stage") == SELF_CHECK_STAGE)
    assert full_checks == settings.exam.self_check_min
    figure = estimate.self_check_calls
    assert figure.low <= full_checks <= figure.high and figure.value == pytest.approx(full_checks)

    off = settings.model_copy(update={"exam": settings.exam.model_copy(update={"self_check_share": 0.0})})
    without = extrapolate(off, pilot)
    assert without.self_check_calls.value == 0
    assert _judge_calls(estimate.by_role) - _judge_calls(without.by_role) == pytest.approx(figure.value)


def _call(stage: str, units: int, prompt: int, completion: int) -> dict:  # type: ignore[type-arg]
    return {"role": "judge", "endpoint": "j", "stage": stage, "unit_ids": [f"u{i}" for i in range(units)],
            "prompt_tokens": prompt, "completion_tokens": completion}


def test_too_few_rejudgments_fall_back_to_the_judges_calls_widened() -> None:
    """Fewer than MIN_SELF_CHECK_CALLS measured re-judgments: the judge's first judgments about two or more
    units stand in for the tokens per call, and each draw scales them within FALLBACK_SPREAD either way."""
    records = [_call("judge", 3, 300, 40), _call("judge", 2, 200, 60), _call("judge", 1, 100, 999),
               _call(SELF_CHECK_STAGE, 3, 300, 90)]
    check = _self_check_pilot(records, rejudged=1, judged=3)
    assert check.fallback
    assert check.calls_per_answer == {("judge", "j"): 1.0}
    assert sorted(check.per_call[("judge", "j")][:, 1]) == [40, 60, 90], "calls about one unit are left out"

    measured = [_call(SELF_CHECK_STAGE, 2, 200, 100 + i) for i in range(MIN_SELF_CHECK_CALLS)]
    enough = _self_check_pilot(records[:3] + measured, rejudged=MIN_SELF_CHECK_CALLS, judged=3)
    assert not enough.fallback and len(enough.per_call[("judge", "j")]) == MIN_SELF_CHECK_CALLS


def test_rejudgment_usage_central_and_drawn() -> None:
    """Central: answers x calls per answer x mean tokens per call; a draw resamples the calls, and a
    fallback draw may be up to FALLBACK_SPREAD times larger or smaller."""
    pool = np.array([[100.0, 10.0], [300.0, 50.0]])

    class Data:  # the two fields _self_check_usage reads
        keys = [("examiner", "e"), ("judge", "j")]
        self_check = SelfCheckPilot({("judge", "j"): 1.0}, {("judge", "j"): pool}, fallback=False)

    usage, calls = _self_check_usage(Data, 20, None)  # type: ignore[arg-type]
    assert calls == 20 and list(usage[1]) == [20, 4000, 600] and not usage[0].any()
    rng = np.random.default_rng(0)
    drawn = [_self_check_usage(Data, 20, rng)[0][1, 2] for _ in range(200)]  # type: ignore[arg-type]
    assert 200 <= min(drawn) < 600 < max(drawn) <= 1000
    Data.self_check = SelfCheckPilot({("judge", "j"): 1.0}, {("judge", "j"): pool}, fallback=True)
    wide = [_self_check_usage(Data, 20, rng)[0][1, 2] for _ in range(200)]  # type: ignore[arg-type]
    assert 200 / FALLBACK_SPREAD <= min(wide) < 200 and 1000 < max(wide) <= 1000 * FALLBACK_SPREAD, \
        "the widened draws pass the bounds of the resampled calls alone"
