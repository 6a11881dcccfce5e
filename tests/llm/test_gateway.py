"""Gateway behaviour against the simulated server: retries, repairs, cache, ledger, budget, secrets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from examiner.core.config import EndpointSpec, ExamSettings, Settings
from examiner.core.rundir import RunDir
from examiner.core.errors import BudgetExhausted, ConfigError
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig, ModelCallError, Unparseable
from examiner.llm.ledger import aggregate, outcomes as outcome_records
from examiner.simulator import SimRequest, SimulatedServer, register_behaviour
from examiner.llm.structured import extract_json, parse_structured

PRICE_IN, PRICE_OUT = 2.5, 10.0


class Question(BaseModel):
    question: str
    target: list[str]


UNITS = "\n".join(f'<unit id="u{i}">Fact number {i} about the subject.</unit>' for i in range(5))
QUESTION_PROMPT = [{"role": "user", "content": f"Write one question about:\n{UNITS}"}]


def settings_for(base_url: str, **spec: object) -> Settings:
    endpoint = dict(
        provider="simulated", base_url=base_url, model="sim", price_input_per_1m=PRICE_IN,
        price_output_per_1m=PRICE_OUT, backoff_base_s=0.01, max_attempts=4, max_concurrency=8,
    )
    endpoint.update(spec)
    return Settings(endpoints={"sim": EndpointSpec(**endpoint)}, roles={r: "sim" for r in ("examiner", "candidate", "judge")})


@pytest.fixture
def server():
    def start(**options: object) -> str:
        srv = SimulatedServer(options=dict(options), seed=0)
        started.append(srv)
        return srv.start()

    started: list[SimulatedServer] = []
    yield start
    for srv in started:
        srv.stop()


async def test_rate_limit_retry_honours_retry_after(server, tmp_path: Path) -> None:
    # Guards: a 429 must wait the server's Retry-After, not the (tiny) exponential back-off.
    url = server(faults={"rate_limit": 0.6}, retry_after_s=0.2)
    async with Gateway(settings_for(url), tmp_path) as gw:
        results = [await gw.chat("examiner", [{"role": "user", "content": f"hello {i}"}], GenerationConfig(max_tokens=8)) for i in range(6)]
    limited = [a for r in results for a in r.attempts if a.status == "429"]
    assert limited, "expected some 429 attempts at a 60% fault rate"
    assert all(a.wait_s == pytest.approx(0.2) for a in limited)
    assert all(r.attempts[-1].status == "ok" for r in results)


async def test_server_errors_retried_then_surfaced(server, tmp_path: Path) -> None:
    url = server(faults={"server_error": 1.0})
    async with Gateway(settings_for(url, max_attempts=3), tmp_path) as gw:
        with pytest.raises(ModelCallError) as caught:
            await gw.chat("candidate", [{"role": "user", "content": "hi"}], GenerationConfig(max_tokens=8))
    assert [a.status for a in caught.value.attempts] == ["500", "500", "500"]
    failed = [r for r in RunDir(tmp_path).ledger_records() if r.outcome == "failed"]
    assert len(failed) == 1 and failed[0].cost_usd == 0.0


async def test_timeouts_retried_then_surfaced(server, tmp_path: Path) -> None:
    url = server(faults={"timeout": 1.0}, timeout_sleep_s=2.0)
    async with Gateway(settings_for(url, max_attempts=2, timeout_s=0.3), tmp_path) as gw:
        with pytest.raises(ModelCallError) as caught:
            await gw.chat("candidate", [{"role": "user", "content": "hi"}], GenerationConfig(max_tokens=8))
    assert [a.status for a in caught.value.attempts] == ["timeout", "timeout"]


async def test_server_errors_recovered_when_intermittent(server, tmp_path: Path) -> None:
    url = server(faults={"server_error": 0.3, "empty_choices": 0.1})
    async with Gateway(settings_for(url, max_attempts=8), tmp_path) as gw:
        results = [await gw.chat("candidate", [{"role": "user", "content": f"q{i}"}], GenerationConfig(max_tokens=8)) for i in range(10)]
    statuses = {a.status for r in results for a in r.attempts}
    assert {"500", "ok"} <= statuses
    assert all(r.text for r in results)


async def ask_question_under(fault: str, server, tmp_path: Path) -> tuple[CallResult[Question], Gateway]:
    """One structured question call to a server that injects `fault` into every reply."""
    url = server(faults={fault: 1.0})
    async with Gateway(settings_for(url), tmp_path) as gw:
        result = await gw.chat("examiner", QUESTION_PROMPT, GenerationConfig(max_tokens=200), CallContext(stage="question"),
                               schema=Question)
    return result, gw


async def test_malformed_json_is_repaired(server, tmp_path: Path) -> None:
    result, _ = await ask_question_under("malformed_json", server, tmp_path)
    assert isinstance(result.parsed, Question)
    assert set(result.parsed.target) <= {f"u{i}" for i in range(5)}


async def test_truncated_json_is_unparseable_with_raw_text(server, tmp_path: Path) -> None:
    # Guards: closing a cut-off JSON object would invent a complete-looking answer.
    result, gw = await ask_question_under("truncated_json", server, tmp_path)
    assert isinstance(result.parsed, Unparseable)
    assert result.parsed.raw and "cut off" in result.parsed.error
    assert gw.totals.unparseable == 1
    repairs = [r for r in outcome_records(RunDir(tmp_path).ledger_records()) if r.repair]
    assert len(repairs) == 2, "the gateway re-asks twice before giving up"


def test_tolerant_extraction_never_invents_fields() -> None:
    assert extract_json("Sure! ```json\n{'question': 'Why?', 'target': ['a',],}\n```") == {"question": "Why?", "target": ["a"]}
    parsed, error = parse_structured('{"question": "Why?"}', Question)
    assert parsed is None and "target" in error


async def test_second_identical_run_makes_no_new_calls(server, tmp_path: Path) -> None:
    url = server()
    prompts = [[{"role": "user", "content": f"question {i}"}] for i in range(5)]
    for attempt in range(2):
        async with Gateway(settings_for(url), tmp_path) as gw:
            for prompt in prompts:
                await gw.chat("candidate", prompt, GenerationConfig(max_tokens=32))
            if attempt == 0:
                assert gw.totals.calls == 5 and gw.totals.cache_hits == 0
            else:
                assert gw.totals.calls == 0 and gw.totals.cache_hits == 5
                assert gw.totals.cost_usd == 0.0


async def test_concurrent_identical_requests_are_paid_once(server, tmp_path: Path) -> None:
    import asyncio

    url = server(latency_s=0.05)
    async with Gateway(settings_for(url), tmp_path) as gw:
        results = await asyncio.gather(*(gw.chat("candidate", [{"role": "user", "content": "same"}], GenerationConfig(max_tokens=16)) for _ in range(4)))
    assert sum(not r.cache_hit for r in results) == 1
    assert len({r.text for r in results}) == 1


async def test_ledger_dollars_match_hand_computation(server, tmp_path: Path) -> None:
    url = server()
    async with Gateway(settings_for(url, structured_output="json_schema"), tmp_path, cache=False) as gw:
        for i in range(3):
            await gw.chat("examiner", QUESTION_PROMPT, context=CallContext(stage="question", round=1, unit_ids=("u0", "u1")),
                          schema=Question)
            await gw.chat("candidate", [{"role": "user", "content": f"question {i}"}], GenerationConfig(max_tokens=64),
                          CallContext(stage="answer"))
    records = outcome_records(RunDir(tmp_path).ledger_records())
    assert len(records) == 6 and all(r.usage_source == "api" for r in records)
    for record in records:
        hand = record.prompt_tokens * PRICE_IN / 1e6 + record.completion_tokens * PRICE_OUT / 1e6
        assert record.cost_usd == pytest.approx(hand, rel=1e-12)
    by_role = {row["role"]: row for row in aggregate(records, by=("role",))}
    assert by_role["examiner"]["calls"] == 3 and by_role["candidate"]["calls"] == 3
    assert by_role["examiner"]["units"] == 2
    assert sum(r["cost_usd"] for r in by_role.values()) == pytest.approx(gw.totals.cost_usd)


async def test_tiktoken_counts_when_usage_is_absent(server, tmp_path: Path) -> None:
    url = server(report_usage=False)
    async with Gateway(settings_for(url), tmp_path) as gw:
        result = await gw.chat("candidate", [{"role": "user", "content": "tell me"}], GenerationConfig(max_tokens=64))
    assert result.usage_source == "tiktoken" and result.prompt_tokens > 0 and result.completion_tokens > 0


async def test_budget_stop_leaves_spend_within_budget(server, tmp_path: Path) -> None:
    import asyncio

    url = server()
    budget = 0.01
    async with Gateway(settings_for(url), tmp_path, cache=False, budget_usd=budget) as gw:

        async def ask(i: int) -> str:
            try:
                await gw.chat("candidate", [{"role": "user", "content": f"question {i}"}], GenerationConfig(max_tokens=300))
                return "ok"
            except BudgetExhausted:
                return "stopped"

        outcomes = await asyncio.gather(*(ask(i) for i in range(40)))
    assert "stopped" in outcomes and "ok" in outcomes
    spent = sum(r.cost_usd for r in outcome_records(RunDir(tmp_path).ledger_records()))
    assert spent <= budget
    assert gw.budget.spent_usd == pytest.approx(spent)


async def test_api_key_never_written(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-" + "9" * 40
    monkeypatch.setenv("EXAMINER_TEST_KEY", secret)
    url = server()
    settings = settings_for(url, api_key_env="EXAMINER_TEST_KEY")
    async with Gateway(settings, tmp_path) as gw:
        await gw.chat("examiner", QUESTION_PROMPT, context=CallContext(stage="question"), schema=Question)
        await gw.chat("candidate", [{"role": "user", "content": "hello"}])
    (tmp_path / "settings.json").write_text(settings.model_dump_json())
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written
    for path in written:
        assert secret.encode() not in path.read_bytes(), path


def test_missing_api_key_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from examiner.core.errors import ConfigError

    monkeypatch.delenv("EXAMINER_ABSENT_KEY", raising=False)
    spec = EndpointSpec(provider="openai", base_url="http://127.0.0.1:9/v1", api_key_env="EXAMINER_ABSENT_KEY")
    with pytest.raises(ConfigError, match="EXAMINER_ABSENT_KEY"):
        spec.api_key()


async def test_logprobs_pass_through(server, tmp_path: Path) -> None:
    url = server()
    async with Gateway(settings_for(url), tmp_path) as gw:
        result = await gw.chat(
            "geval", [{"role": "user", "content": "Rate coherence from 1 to 5. Coherence:"}],
            GenerationConfig(max_tokens=1, logprobs=True, top_logprobs=5), endpoint="sim",
        )
    assert result.logprobs and result.logprobs[0].top
    assert all(isinstance(v, float) for v in result.logprobs[0].top.values())


async def test_n_samples_fan_out_when_endpoint_returns_one_choice(server, tmp_path: Path) -> None:
    url = server()
    async with Gateway(settings_for(url, supports_n=False), tmp_path) as gw:
        result = await gw.chat("candidate", [{"role": "user", "content": "sample"}],
                                GenerationConfig(max_tokens=16, temperature=1.0, n=4))
    assert len(result.texts) == 4


async def test_tokens_per_minute_limiter_waits() -> None:
    from examiner.llm.limits import TokenRateLimiter

    limiter = TokenRateLimiter(100, window_s=0.2)
    assert await limiter.acquire(80) == 0.0
    assert await limiter.acquire(50) > 0.0


def test_unknown_role_and_endpoint_are_config_errors() -> None:
    from examiner.core.config import load_settings
    from examiner.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown role"):
        load_settings(None, role_overrides={"wizard": "local"}, environ={})
    with pytest.raises(ConfigError, match="not defined"):
        load_settings(None, role_overrides={"judge": "nowhere"}, environ={})
    with pytest.raises(ConfigError, match="budget"):
        load_settings(None, budget_usd=-1, environ={})


def test_config_from_yaml_and_environment(tmp_path: Path) -> None:
    from examiner.core.config import load_settings

    path = tmp_path / "config.yaml"
    path.write_text(
        "endpoints:\n  gpt:\n    base_url: https://api.example.invalid/v1\n    model: gpt-x\n"
        "    api_key_env: MY_KEY\n    price_input_per_1m: 1.5\nroles:\n  judge: gpt\n"
    )
    settings = load_settings(path, environ={"EXAMINER_ROLE_EXAMINER": "gpt"})
    assert settings.endpoint_for("judge")[0] == "gpt"
    assert settings.endpoint_for("examiner")[0] == "gpt"
    assert settings.endpoint_for("candidate")[0] == "local"
    assert "MY_KEY" in json.dumps(settings.model_dump()) and os.environ.get("MY_KEY") is None


async def test_call_context_goes_out_as_request_metadata_and_the_ledger_keeps_its_fields(server, tmp_path: Path) -> None:
    """Stage and hints reach the endpoint as headers (the simulator reads them instead of prompt prose);
    the ledger records the same context fields as before, without the hints."""
    seen: list[tuple[str, dict[str, object]]] = []

    @register_behaviour("context_probe")
    def probe(req: SimRequest) -> str:
        seen.append((req.stage, dict(req.hints)))
        return "ok"

    url = server()
    context = CallContext(stage="referee", round=2, unit_ids=("u1",), item_id="i9", hints={"max_rounds": 3})
    async with Gateway(settings_for(url), tmp_path) as gw:
        result = await gw.chat("context_probe", [{"role": "user", "content": "hi"}], GenerationConfig(max_tokens=4),
                               context, endpoint="sim")
    assert seen == [("referee", {"round": 2, "max_rounds": 3})]
    assert result.parsed == result.text == result.value() == "ok" and result.ok
    (record,) = outcome_records(RunDir(tmp_path).ledger_records())
    assert {k: record.fields()[k] for k in ("role", "stage", "round", "unit_ids", "item_id")} == {
        "role": "context_probe", "stage": "referee", "round": 2, "unit_ids": ["u1"], "item_id": "i9"}
    assert not record.has("hints") and not record.has("max_rounds")


def test_settings_are_frozen_and_changed_by_validated_merged_copies() -> None:
    settings = Settings(exam={"max_rounds": 3, "cluster_size": 4})
    with pytest.raises(ValidationError, match="frozen"):
        settings.budget_usd = 1.0  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        settings.exam.max_rounds = 9  # type: ignore[misc]
    merged = settings.merged({"budget_usd": 2.5, "exam": {"max_rounds": 5}})
    assert (merged.budget_usd, merged.exam.max_rounds, merged.exam.cluster_size) == (2.5, 5, 4)
    assert settings.budget_usd is None and settings.exam.max_rounds == 3
    assert merged.endpoints == settings.endpoints and merged.roles == settings.roles
    with pytest.raises(ConfigError, match="max_rounds"):
        settings.merged({"exam": {"max_rounds": 0}})


@pytest.mark.parametrize("model", [EndpointSpec, ExamSettings, Settings])
def test_every_settings_field_is_documented(model: type[BaseModel]) -> None:
    undocumented = [name for name, field in model.model_fields.items() if not (field.description or "").strip()]
    assert not undocumented, f"{model.__name__} fields without a docstring: {undocumented}"
