"""G-Eval arithmetic and the form-filling agent: logprob expectation by hand, sampling fallback."""

from __future__ import annotations

import math

import pytest

import examiner.simulator.judging_roles  # noqa: F401 - registers the judging behaviours
from examiner.agents.judge.geval import evaluation_steps, form_fill, geval_score
from examiner.core.config import EndpointSpec, Settings
from examiner.agents.judge.geval_math import expected_from_logprobs, mean_of_samples
from examiner.llm.gateway import Gateway
from examiner.simulator import SimulatedServer
from examiner.core.labels import Unscored
from examiner.llm.types import TokenLogprob
from examiner.agents.prompting import render


def test_expectation_equals_hand_computation() -> None:
    top = {"4": math.log(0.5), "3": math.log(0.2), "5": math.log(0.1), " 2": math.log(0.05), "the": math.log(0.1)}
    tokens = [TokenLogprob("Score", math.log(0.9), {}), TokenLogprob("4", math.log(0.5), top)]
    result = expected_from_logprobs(tokens, [1, 2, 3, 4, 5])
    assert result is not None and result.path == "logprobs"
    # renormalised over the score tokens only: (4*.5 + 3*.2 + 5*.1 + 2*.05) / .85
    assert result.score == pytest.approx((2.0 + 0.6 + 0.5 + 0.1) / 0.85)
    assert result.probabilities[4] == pytest.approx(0.5 / 0.85)
    assert sum(result.probabilities.values()) == pytest.approx(1.0)


def test_no_score_token_gives_none() -> None:
    assert expected_from_logprobs([TokenLogprob("hello", -0.1, {"hi": -2.0})], [1, 2, 3]) is None
    assert expected_from_logprobs(None, [1, 2, 3]) is None


def test_samples_exclude_unparseable_never_zero() -> None:
    result = mean_of_samples(["4", "Score: 2", "none", "9", "", "3"], [1, 2, 3, 4, 5])
    assert result.path == "samples"
    assert result.n_samples == 6 and result.n_used == 3 and result.n_unparseable == 3
    assert result.score == pytest.approx(3.0)
    empty = mean_of_samples(["n/a", "?"], [1, 2, 3, 4, 5])
    assert isinstance(empty.score, Unscored) and empty.n_unparseable == 2


def _settings(url: str, logprobs: bool) -> Settings:
    spec = EndpointSpec(provider="simulated", base_url=url, model="sim-judge", supports_logprobs=logprobs, max_attempts=2)
    return Settings(endpoints={"sim": spec}, roles={"geval": "sim"})


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(seed=3) as url:
        yield url


async def test_logprob_path_against_simulator(server: str) -> None:
    async with Gateway(_settings(server, True)) as gw:
        result = await geval_score(gw, task="Rate a text.", criterion="Quality (1-5): overall quality.",
                                   text="Some text (u1:known) (u2:known).", source="src")
        assert result.path == "logprobs"
        assert 1 <= result.score <= 5
        assert result.n_samples == 1 and sum(result.probabilities.values()) == pytest.approx(1.0)


async def test_sampling_fallback_when_endpoint_has_no_logprobs(server: str) -> None:
    async with Gateway(_settings(server, False)) as gw:
        result = await geval_score(gw, task="Rate a text.", criterion="Quality (1-5): overall quality.",
                                   text="Some text (u1:known) (u2:wrong).", source="src", n=20)
        assert result.path == "samples"
        assert result.n_samples == 20 and result.n_used + result.n_unparseable == 20
        assert 1 <= result.score <= 5
        assert gw.totals.calls == 2  # steps + one n=20 request


async def test_steps_written_once_per_task_and_criterion(server: str) -> None:
    async with Gateway(_settings(server, True)) as gw:
        import asyncio

        steps = await asyncio.gather(*(evaluation_steps(gw, task="T", criterion="C (1-5)") for _ in range(5)))
        assert len(set(steps)) == 1 and steps[0].startswith("1.")
        assert gw.totals.calls == 1
        await evaluation_steps(gw, task="T", criterion="D (1-5)")
        assert gw.totals.calls == 2


async def test_unscorable_logprob_reply_falls_back_and_records_why(server: str) -> None:
    from examiner.simulator import register_behaviour

    @register_behaviour("geval", "odd")
    def _odd(req):  # noqa: ANN001, ANN202
        return "excellent" if req.temperature == 0 else ("4" if req.index % 2 else "n/a")

    async with Gateway(_settings(server, True)) as gw:
        messages = render("geval_score", task="T", criterion="C (1-5)", steps="1. read", source="s", text="t",
                          scale=5, form_label="Score")
        result = await form_fill(gw, messages, scale=5, stage="odd", n=10)
        assert result.path == "samples" and "no score token" in result.fallback_reason
        assert result.n_used == 5 and result.n_unparseable == 5 and result.score == 4.0
