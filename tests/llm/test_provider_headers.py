"""The simulator's request metadata (`X-Examiner-*` headers) reaches simulated endpoints only.

A recording OpenAI-compatible server stands in for a real endpoint: it answers every chat completion
and keeps the headers of each request. The judge's G-Eval path is run against it as an `openai`
endpoint (none of examiner's headers may arrive) and as a `simulated` endpoint at the same URL (role,
stage and hints arrive, as the simulated backend needs them).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from aiohttp import web
from pydantic import BaseModel

from examiner.core.config import ROLES, EndpointSpec, Settings
from examiner.judging.dataset import Row
from examiner.judging.single import GEvalOptions, run_geval
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.llm.transport import ModelCallError
from examiner.simulator.headers import HINTS, PREFIX, ROLE, STAGE

ROWS = [Row(line=1, id="r1", instruction="Name the capital of France.", output="Paris."),
        Row(line=2, id="r2", instruction="Add two and two.", output="Four.")]


@dataclass
class Recorder:
    """What the recording server saw, and how it answers."""

    url: str = ""
    headers: list[dict[str, str]] = field(default_factory=list)
    """Each request's headers, names in lower case (HTTP header names are case-insensitive)."""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    reject_schema: bool = False
    """Answer HTTP 400 to a request whose response_format is a json_schema (a server without that mode)."""
    reject_all: str = ""
    """When set, answer every request HTTP 400 with this error message (a bad request of another kind)."""


def _completion(content: str, model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-rec", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}


@pytest.fixture
async def recorder() -> AsyncIterator[Recorder]:
    seen = Recorder()

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.headers.append({name.lower(): value for name, value in request.headers.items()})
        seen.bodies.append(body)
        fmt = body.get("response_format") or {}
        if seen.reject_all:
            return web.json_response({"error": {"message": seen.reject_all}}, status=400)
        if seen.reject_schema and fmt.get("type") == "json_schema":
            await asyncio.sleep(0.05)  # concurrent requests are all rejected before any falls back
            return web.json_response({"error": {"message": "response_format json_schema is not supported"}},
                                     status=400)
        content = '{"label": "yes"}' if fmt else "Score: 4"
        return web.json_response(_completion(content, str(body.get("model"))))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    seen.url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    yield seen
    await runner.cleanup()


def _judge_on(provider: Literal["openai", "simulated"], url: str) -> Settings:
    endpoint = EndpointSpec(provider=provider, base_url=url, model="rec-model", max_attempts=2, backoff_base_s=0.01)
    return Settings(endpoints={"judge-endpoint": endpoint}, roles={role: "judge-endpoint" for role in ROLES},
                    cache=False)


async def test_a_real_endpoint_gets_no_examiner_headers(recorder: Recorder, tmp_path: Path) -> None:
    async with Gateway(_judge_on("openai", recorder.url), tmp_path) as gw:
        records = await run_geval(gw, ROWS, GEvalOptions(n=2))
    assert [r["id"] for r in records] == ["r1", "r2"] and not any(r.get("error") for r in records), records
    assert len(recorder.headers) >= 3  # the evaluation steps, then the rows' scoring calls
    sent = {name for headers in recorder.headers for name in headers}
    assert not [name for name in sent if name.startswith(PREFIX.lower())], sorted(sent)


async def test_a_simulated_endpoint_gets_role_stage_and_hints(recorder: Recorder, tmp_path: Path) -> None:
    async with Gateway(_judge_on("simulated", recorder.url), tmp_path) as gw:
        await run_geval(gw, ROWS, GEvalOptions(n=2))
    role, stage, hints = ROLE.lower(), STAGE.lower(), HINTS.lower()
    assert recorder.headers and all(h.get(role) == "geval" and h.get(stage) for h in recorder.headers)
    scoring = [json.loads(h[hints]) for h in recorder.headers if hints in h]
    assert scoring and all(hints == {"scale": 5} for hints in scoring)


class Label(BaseModel):
    label: str


async def test_a_rejected_response_format_falls_back_once_for_concurrent_calls(recorder: Recorder,
                                                                               tmp_path: Path) -> None:
    """Each retry carries its own structured-output mode: two calls rejected at once both fall back one step
    (json_schema -> json_object), and the endpoint keeps json_object, not a second step down to text."""
    recorder.reject_schema = True
    spec = EndpointSpec(base_url=recorder.url, model="rec-model", structured_output="json_schema", max_attempts=3,
                        backoff_base_s=0.01)
    settings = Settings(endpoints={"rec": spec}, roles={"judge": "rec"}, cache=False)
    async with Gateway(settings, tmp_path) as gw:
        results = await asyncio.gather(*(gw.chat("judge", [{"role": "user", "content": f"label {i}"}],
                                                 GenerationConfig(max_tokens=16), CallContext(stage="judge"),
                                                 schema=Label) for i in range(2)))
        endpoint = gw.transport.known("rec")
        assert endpoint is not None and endpoint.structured_mode == "json_object"
        later = await gw.chat("judge", [{"role": "user", "content": "label later"}], GenerationConfig(max_tokens=16),
                              CallContext(stage="judge"), schema=Label)
    assert all(r.ok and r.value().label == "yes" for r in [*results, later])
    formats = [(b.get("response_format") or {}).get("type") for b in recorder.bodies]
    assert formats == ["json_schema", "json_schema", "json_object", "json_object", "json_object"]


async def test_a_bad_request_of_another_kind_fails_the_call_and_keeps_the_format(recorder: Recorder,
                                                                                tmp_path: Path) -> None:
    """A 400 whose error does not name the reply format (here a prompt past the context) is the call's own
    error: one attempt, the server's reason in the error, and the endpoint keeps json_schema for later calls
    instead of stepping down to a looser format it did not need."""
    recorder.reject_all = "This model's maximum context length is 8192 tokens; your messages resulted in 9000"
    spec = EndpointSpec(base_url=recorder.url, model="rec-model", structured_output="json_schema", max_attempts=3,
                        backoff_base_s=0.01)
    settings = Settings(endpoints={"rec": spec}, roles={"judge": "rec"}, cache=False)
    async with Gateway(settings, tmp_path) as gw:
        with pytest.raises(ModelCallError, match="maximum context length") as failed:
            await gw.chat("judge", [{"role": "user", "content": "label this"}], GenerationConfig(max_tokens=16),
                          CallContext(stage="judge"), schema=Label)
        endpoint = gw.transport.known("rec")
        assert endpoint is not None and endpoint.structured_mode == "json_schema"
    assert [a.status for a in failed.value.attempts] == ["400"]
    assert [(b.get("response_format") or {}).get("type") for b in recorder.bodies] == ["json_schema"]
