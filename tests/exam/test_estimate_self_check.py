"""The judge self-check in `examiner estimate`: its own term (the node's sample size of the predicted
answers it may draw, times the pilot's tokens per re-judgment), not usage extrapolated per unit. Its
size is a floor (self_check_min answers), not a share, so a pilot that re-judged all of its few answers
says little about the full run's count by scaling."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from examiner.core.ledger_record import LedgerRecord
from examiner.core.records import SELF_CHECK_STAGE
from examiner.core.rundir import RunDir
from examiner.exam.estimate import (FALLBACK_SPREAD, MIN_SELF_CHECK_CALLS, SelfCheckPilot, _self_check_pilot,
                                    _self_check_usage, estimate_exam, extrapolate)
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.gateway import MAX_REPAIRS
from examiner.llm.ledger import answered
from examiner.agents.judge.unit_judge import reply_limit
from tests.helpers.simulated_exam import sim_settings

HANDBOOK = "corpora/examiner-handbook"


def _judge_calls(estimate_figures: list) -> float:  # type: ignore[type-arg]
    return sum(u.calls.value for u in estimate_figures if u.role == "judge")


def test_floor_sized_self_check_is_predicted_by_the_nodes_rule(tmp_path: Path) -> None:
    """A 2-cluster pilot run through every round (`rounds`) re-judges all of its few answers (fewer than
    the floor of 20); the full run re-judges 20. Extrapolating the pilot's self-check calls per unit predicts the pilot's count scaled by
    the corpus; the estimate predicts the node's sample size, and its judge row moves by exactly that when
    the self-check is switched off (usage scaled from the pilot's ledger would not move at all)."""
    settings = sim_settings(max_rounds=8)
    pilot = tmp_path / "pilot"
    estimate = asyncio.run(estimate_exam(settings, ExamRequest([HANDBOOK]), pilot, clusters=2,
                                         rounds=settings.exam.max_rounds))
    pilot_checks = [r for r in answered(RunDir(pilot).ledger_records()) if r.stage == SELF_CHECK_STAGE]
    assert MIN_SELF_CHECK_CALLS <= len(pilot_checks) < settings.exam.self_check_min, "the floor dominates"

    full = tmp_path / "full"
    asyncio.run(start_exam(settings, ExamRequest([HANDBOOK]), full, quiet=True, report=False))
    full_checks = sum(1 for r in answered(RunDir(full).ledger_records()) if r.stage == SELF_CHECK_STAGE)
    assert full_checks == settings.exam.self_check_min
    figure = estimate.self_check_calls
    assert figure.low <= full_checks <= figure.high and figure.value == pytest.approx(full_checks)

    off = settings.model_copy(update={"exam": settings.exam.model_copy(update={"self_check_share": 0.0})})
    without = extrapolate(off, pilot)
    assert without.self_check_calls.value == 0
    assert _judge_calls(estimate.by_role) - _judge_calls(without.by_role) == pytest.approx(figure.value)


def _call(stage: str, units: int, prompt: int, completion: int, call_id: str, *,
          finish: str = "stop") -> LedgerRecord:
    return LedgerRecord.build(role="judge", endpoint="j", stage=stage, unit_ids=[f"u{i}" for i in range(units)],
                              prompt_tokens=prompt, completion_tokens=completion, call_id=call_id,
                              finish_reason=finish)


def test_too_few_rejudgments_fall_back_to_the_judges_requests() -> None:
    """Fewer than MIN_SELF_CHECK_CALLS measured re-judgments: the judge's first judgments about two or more
    units (pooled with the measured re-judgments) stand in for the tokens per request."""
    records = [_call("judge", 3, 300, 40, "a"), _call("judge", 2, 200, 60, "b"), _call("judge", 1, 100, 999, "c"),
               _call(SELF_CHECK_STAGE, 3, 300, 90, "d")]
    check = _self_check_pilot(records, rejudged=1, judged=3)
    assert check.fallback
    assert check.requests_per_answer == {("judge", "j"): 1.0}
    assert sorted(check.whole[("judge", "j")][:, 2]) == [40, 60, 90], "calls about one unit are left out"
    assert check.seen[("judge", "j")] == (0, 4)

    measured = [_call(SELF_CHECK_STAGE, 2, 200, 100 + i, f"s{i}") for i in range(MIN_SELF_CHECK_CALLS)]
    enough = _self_check_pilot(records[:3] + measured, rejudged=MIN_SELF_CHECK_CALLS, judged=3)
    assert not enough.fallback and len(enough.whole[("judge", "j")]) == MIN_SELF_CHECK_CALLS


def test_a_reply_cut_at_the_limit_is_one_request_with_its_re_asks() -> None:
    """A re-judgment cut at max_tokens and re-asked twice is one request of three calls (same call_id),
    drawn as a whole; a pilot that saw none prices the worst case: three calls cut at the reply limit."""
    cut = [_call(SELF_CHECK_STAGE, 2, 300 + 500 * k, 440, "x", finish="length") for k in range(3)]
    whole = [_call(SELF_CHECK_STAGE, 2, 300, 50, f"s{i}") for i in range(MIN_SELF_CHECK_CALLS)]
    check = _self_check_pilot(whole + cut, rejudged=MIN_SELF_CHECK_CALLS + 1, judged=6)
    key = ("judge", "j")
    assert check.requests_per_answer[key] == 1.0 and check.seen[key] == (1, MIN_SELF_CHECK_CALLS + 1)
    assert check.cut[key].tolist() == [[3, 300 + 800 + 1300, 1320]]
    unseen = _self_check_pilot(whole, rejudged=MIN_SELF_CHECK_CALLS, judged=6)
    limit = reply_limit(2)
    assert unseen.seen[key] == (0, MIN_SELF_CHECK_CALLS)
    assert unseen.cut[key].tolist() == [[1 + MAX_REPAIRS, 3 * 300 + limit * 3, 3 * limit]]


class _Data:
    """The two fields of PilotData that _self_check_usage reads."""

    def __init__(self, check: SelfCheckPilot) -> None:
        self.keys = [("examiner", "e"), ("judge", "j")]
        self.self_check = check


def _check(fallback: bool, seen: tuple[int, int]) -> SelfCheckPilot:
    key = ("judge", "j")
    return SelfCheckPilot({key: 1.0}, {key: np.array([[1.0, 100.0, 10.0], [1.0, 300.0, 50.0]])},
                          {key: np.array([[3.0, 2000.0, 1500.0]])}, {key: seen}, fallback)


def test_rejudgment_usage_central_and_drawn() -> None:
    """Central: answers x requests per answer x mean tokens, with the share of cut requests the pilot saw.
    A draw resamples requests; a pilot that saw no cut reply still draws some (Jeffreys prior), and a
    fallback draw may be up to FALLBACK_SPREAD times larger or smaller."""
    data = _Data(_check(False, (0, 40)))
    usage, calls = _self_check_usage(data, 20, None)  # type: ignore[arg-type]
    assert calls == 20 and list(usage[1]) == [20, 4000, 600] and not usage[0].any()
    half = _Data(_check(False, (1, 2)))
    assert list(_self_check_usage(half, 20, None)[0][1]) == [40, 22000, 15300]  # type: ignore[arg-type]

    rng = np.random.default_rng(0)
    drawn = [_self_check_usage(data, 20, rng)[0][1] for _ in range(400)]  # type: ignore[arg-type]
    whole_only = [row[2] for row in drawn if row[0] == 20]
    assert 200 <= min(whole_only) < 600 < max(whole_only) <= 1000
    assert 0 < sum(row[0] > 20 for row in drawn) < 200, "a few draws hold a request cut at the limit"
    wide = [_self_check_usage(_Data(_check(True, (0, 40))), 20, rng)[0][1] for _ in range(400)]  # type: ignore[arg-type]
    wide_whole = [row[2] for row in wide if row[0] == 20]
    assert 200 / FALLBACK_SPREAD <= min(wide_whole) < 200 and 1000 < max(wide_whole) <= 1000 * FALLBACK_SPREAD, \
        "the widened draws pass the bounds of the resampled requests alone"
