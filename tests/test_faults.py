"""Faults that mean it: a standalone simulated server injecting 20 % mixed faults (429 with Retry-After,
500, client timeouts that really fire, malformed and truncated JSON, empty choices) costs requests, never
results.

Why the outcomes can be equal, not merely close: every call is made at temperature 0 with a seed, a
retried request is the same body (the server's fault draw changes, its answer does not), and a re-ask
after an unusable reply carries the `repair` hint, so the simulated model answers it as it would have
answered the first request instead of drawing afresh from a conversation that now holds its bad reply.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_exam import PROFILE, ROLES, outcomes_of

from examiner.config import EndpointSpec, Settings
from examiner.core.records import UnitOutcome
from examiner.llm import Gateway, GenerationConfig, ModelCallError
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.report.store import load_run
from examiner.report.summary import target_scores
from examiner.simulator import SimulatedProcess, SimulatedServer, mixed_faults
from examiner.simulator.faults import original_request

CLIENT_TIMEOUT_S = 0.5
SERVER_STALL_S = 2.0
"""A `timeout` fault answers only after SERVER_STALL_S, well past the client's timeout, so it fires."""


def settings_for(url: str) -> Settings:
    """Every role on the standalone server, with a short client timeout and enough attempts to ride
    out a 20 % fault rate."""
    spec = EndpointSpec(provider="openai", base_url=url, model="sim", price_input_per_1m=2.5,
                        price_output_per_1m=10.0, max_concurrency=16, timeout_s=CLIENT_TIMEOUT_S,
                        max_attempts=10, backoff_base_s=0.02)
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": 5})


async def exam_through_process(corpus: Path, run_dir: Path, fault_rate: float) -> dict[str, Any]:
    """One exam of `corpus` against a SimulatedProcess; its outcomes, scores, ledger and server stats."""
    options = {"knowledge": PROFILE, "faults": mixed_faults(fault_rate), "timeout_sleep_s": SERVER_STALL_S,
               "retry_after_s": 0.05}
    server = SimulatedProcess(options, seed=0)
    with server as url:
        info = await start_exam(settings_for(url), ExamRequest([str(corpus)], run_id="faults"), run_dir,
                                quiet=True, report=False)
        stats = server.stats()
    return {"info": info, "outcomes": outcomes_of(run_dir), "scores": target_scores(load_run(run_dir), "sim"),
            "ledger": RunDir(run_dir).read_ledger(), "stats": stats}


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


def statuses(outcomes: dict[str, UnitOutcome]) -> dict[str, str]:
    return {key: o.status for key, o in outcomes.items()}


@pytest.fixture(scope="module")
def pubmedqa_mini() -> Path:
    """87 knowledge units from 12 PubMedQA abstracts: about 180 requests, enough for every fault kind."""
    return Path("corpora/pubmedqa-mini")


def within(value: float, interval: dict[str, Any]) -> bool:
    return interval["low"] <= value <= interval["high"]


@pytest.mark.slow
async def test_twenty_percent_mixed_faults_change_no_outcome(pubmedqa_mini: Path, tmp_path: Path) -> None:
    clean = await exam_through_process(pubmedqa_mini, tmp_path / "clean", 0.0)
    faulty = await exam_through_process(pubmedqa_mini, tmp_path / "faulty", 0.2)
    assert clean["info"].status == faulty["info"].status == "completed"

    # Every fault kind was injected, and the client saw each one for what it is.
    assert clean["stats"]["faults"] == {}
    assert set(faulty["stats"]["faults"]) == set(mixed_faults(0.2))
    attempts = Counter(a["status"] for r in faulty["ledger"] for a in r.get("attempts", []))
    assert attempts["429"] and attempts["500"] and attempts["empty"], attempts
    assert attempts["timeout"] >= faulty["stats"]["faults"]["timeout"] > 0, "the client timeout did not fire"
    assert any(r.get("repair") for r in faulty["ledger"]), "no malformed or truncated reply was re-asked"
    assert not any(r.get("outcome") == "failed" for r in faulty["ledger"])

    # No unit lost, every unit has an outcome, and each outcome is the clean run's.
    assert len(faulty["outcomes"]) == faulty["info"].units == clean["info"].units > 0
    assert statuses(faulty["outcomes"]) == statuses(clean["outcomes"])
    for figure in ("accuracy", "coverage"):
        assert within(faulty["scores"][figure]["value"], clean["scores"][figure]), figure


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
