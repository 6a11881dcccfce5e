"""Faults that mean it: a standalone simulated server injecting 20 % mixed faults (429 with Retry-After,
500, client timeouts that really fire, malformed and truncated JSON, empty choices) costs requests, never
results.

Why the outcomes can be equal, not merely close: every call is made at temperature 0 with a seed, a
retried request is the same body (the server's fault draw changes, its answer does not), and a re-ask
after an unusable reply carries the `repair` hint, so the simulated model answers it as it would have
answered the first request instead of drawing afresh from a conversation that now holds its bad reply.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from examiner.core.config import EndpointSpec, Settings
from examiner.llm import Gateway, GenerationConfig, ModelCallError
from examiner.simulator import SimulatedServer, mixed_faults
from examiner.simulator.faults import original_request
from tests.helpers.simulated_exam import PROFILE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))
from fault_tolerance import exam_at  # noqa: E402  (the experiment's harness: test and figures agree)

SERVER_STALL_S = 2.0
"""A `timeout` fault answers only after SERVER_STALL_S, well past any client timeout below."""


async def test_a_simulated_twin_times_out_like_a_slow_server(tmp_path: Path) -> None:
    """A twin takes its timeout and attempts from the `simulated` endpoint, so a `timeout` fault there
    stalls past the client timeout: the gateway's timeout path fires and is retried."""
    stall = {"faults": {"timeout": 1.0}, "timeout_sleep_s": SERVER_STALL_S}
    settings = Settings(
        endpoints={"api": EndpointSpec(base_url="http://example.invalid/v1", model="m"),
                   "simulated": EndpointSpec(provider="simulated", model="sim", timeout_s=0.3, max_attempts=2,
                                             backoff_base_s=0.01, options=stall)},
        roles={"candidate": "api"},
    ).simulated()
    twin = settings.endpoints["sim-api"]
    assert (twin.timeout_s, twin.max_attempts, twin.backoff_base_s) == (0.3, 2, 0.01)
    async with Gateway(settings, tmp_path) as gw:
        with pytest.raises(ModelCallError) as caught:
            await gw.chat("candidate", [{"role": "user", "content": "hi"}], GenerationConfig(max_tokens=8))
    assert [a.status for a in caught.value.attempts] == ["timeout", "timeout"]


@pytest.mark.slow
async def test_twenty_percent_mixed_faults_change_no_outcome(tmp_path: Path) -> None:
    """The exam of experiments/fault_tolerance.py (185 units of corpora/harbor-water, 374 requests,
    enough for every fault kind), clean and at 20 % mixed faults."""
    corpus = Path("corpora/harbor-water")
    clean = await exam_at(0.0, corpus, tmp_path / "clean")
    faulty = await exam_at(0.2, corpus, tmp_path / "faulty")
    assert clean["status"] == faulty["status"] == "completed"

    # Every fault kind was injected, and the client saw each one for what it is.
    assert clean["faults"] == {} and clean["retries"] == 0
    assert set(faulty["faults"]) == set(mixed_faults(0.2))
    attempts = faulty["attempts"]
    assert all(attempts.get(status) for status in ("429", "500", "empty")), attempts
    assert attempts.get("timeout", 0) >= faulty["faults"]["timeout"] > 0, "the client timeout did not fire"
    assert faulty["re_asks"] > 0, "no malformed or truncated reply was re-asked"
    assert faulty["failed_calls"] == 0

    # No unit lost, every unit has an outcome, and each outcome is the clean run's.
    assert len(faulty["statuses"]) == faulty["units"] == clean["units"] > 0
    assert faulty["statuses"] == clean["statuses"]
    for figure in ("accuracy", "coverage"):
        low, high = clean[figure]["low"], clean[figure]["high"]
        assert low <= faulty[figure]["value"] <= high, figure


@pytest.mark.parametrize("fault", ["malformed_json", "truncated_json"])
async def test_a_re_ask_answers_the_first_request(fault: str) -> None:
    """At temperature 0 the reply to a re-ask is the reply the first request would have had, had it not
    been damaged."""
    schema = {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}
    body = {"model": "sim", "temperature": 0, "seed": 0, "max_tokens": 200,
            "response_format": {"type": "json_schema", "json_schema": {"name": "q", "schema": schema}},
            "messages": [{"role": "user", "content": '<unit id="u1">Water boils at 100 C.</unit>'}]}
    headers = {"X-Examiner-Role": "examiner", "X-Examiner-Stage": "question"}
    with SimulatedServer({"knowledge": PROFILE}, seed=0) as clean_url, \
            SimulatedServer({"knowledge": PROFILE, "faults": {fault: 1.0}}, seed=0) as bad_url:
        wanted = httpx.post(f"{clean_url}/chat/completions", json=body, headers=headers).json()
        damaged = httpx.post(f"{bad_url}/chat/completions", json=body, headers=headers).json()
        bad_text = damaged["choices"][0]["message"]["content"]
        re_ask = dict(body, messages=body["messages"] + [{"role": "assistant", "content": bad_text},
                                                         {"role": "user", "content": "That reply could not be used."}])
        answer = httpx.post(f"{clean_url}/chat/completions", json=re_ask,
                            headers=dict(headers, **{"X-Examiner-Hints": '{"repair": 1}'})).json()
    first = wanted["choices"][0]["message"]["content"]
    assert bad_text != first
    assert answer["choices"][0]["message"]["content"] == first


def test_original_request_drops_only_failed_attempt_turns() -> None:
    ask = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    turns = [{"role": "assistant", "content": "bad"}, {"role": "user", "content": "again"}]
    body = {"messages": ask + turns * 2}
    assert original_request(body, {"repair": 2, "round": 1}) == ({"messages": ask}, {"round": 1})
    assert original_request(body, {"round": 1}) == (body, {"round": 1})
    # A hint that does not match the conversation's shape leaves the conversation alone.
    assert original_request({"messages": ask}, {"repair": 1})[0] == {"messages": ask}
