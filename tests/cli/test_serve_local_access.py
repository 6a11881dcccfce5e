"""`examiner serve-local --model DIR` serves only callers with its API key, only requests addressed to the
address it listens on, and no web page: a missing or wrong key is 401, another Host (a DNS rebinding
page's) 421, a request with an Origin header or a CORS preflight 403, and no response carries a CORS
header. The refusals come before the model is used, so a model-less ChatModel is enough here."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from examiner.llm import hf_server
from examiner.llm.hf_server import ChatModel, allowed_hosts, make_server

KEY = "test-key-123"


@pytest.fixture()
def base() -> Iterator[str]:
    server = make_server(ChatModel(None, None, "tiny-judge"), "127.0.0.1", 0, KEY)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _get(url: str, **headers: str) -> httpx.Response:
    return httpx.get(url, headers=headers, timeout=10)


def test_the_key_is_required(base: str) -> None:
    assert _get(f"{base}/models").status_code == 401
    assert _get(f"{base}/models", Authorization="Bearer wrong").status_code == 401
    assert httpx.post(f"{base}/chat/completions", json={"messages": []}, timeout=10).status_code == 401
    ok = _get(f"{base}/models", Authorization=f"Bearer {KEY}")
    assert ok.status_code == 200 and ok.json()["data"][0]["id"] == "tiny-judge"


def test_another_host_name_and_web_pages_are_refused_and_no_cors_header_is_sent(base: str) -> None:
    port = base.split(":")[2].split("/")[0]
    auth = f"Bearer {KEY}"
    assert _get(f"{base}/models", Authorization=auth, Host=f"attacker.example:{port}").status_code == 421
    assert _get(f"{base}/models", Authorization=auth, Host=f"localhost:{port}").status_code == 200
    from_page = _get(f"{base}/models", Authorization=auth, Origin="https://attacker.example")
    assert from_page.status_code == 403
    preflight = httpx.request("OPTIONS", f"{base}/chat/completions", timeout=10,
                              headers={"Origin": "https://attacker.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 403
    for response in (from_page, preflight, _get(f"{base}/models", Authorization=auth)):
        assert not any(name.lower().startswith("access-control-") for name in response.headers)


def test_allowed_hosts_follow_the_bound_address() -> None:
    assert allowed_hosts("0.0.0.0", 8077) is None  # every name reaches a wildcard bind: the key guards it
    assert allowed_hosts("127.0.0.1", 8077) == frozenset({"127.0.0.1:8077", "localhost:8077", "[::1]:8077"})
    assert allowed_hosts("10.1.2.3", 9000) == frozenset({"10.1.2.3:9000"})


def test_serve_model_generates_and_prints_a_key_when_none_is_set(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    keys: list[str | None] = []
    monkeypatch.delenv(hf_server.KEY_ENV, raising=False)
    monkeypatch.setattr(hf_server, "load_model", lambda path: (None, None))
    real = hf_server.make_server

    def recording(chat: ChatModel, host: str, port: int, key: str | None = None):  # type: ignore[no-untyped-def]
        keys.append(key)
        server = real(chat, host, 0, key)
        monkeypatch.setattr(server, "serve_forever", lambda: (_ for _ in ()).throw(KeyboardInterrupt))
        return server

    monkeypatch.setattr(hf_server, "make_server", recording)
    hf_server.serve_model(__import__("pathlib").Path("model"), "127.0.0.1", 0)
    assert keys and keys[0] and len(keys[0]) >= 24 and keys[0] in capsys.readouterr().out
    monkeypatch.setenv(hf_server.KEY_ENV, "chosen-key")
    hf_server.serve_model(__import__("pathlib").Path("model"), "127.0.0.1", 0)
    assert keys[1] == "chosen-key" and "chosen-key" not in capsys.readouterr().out
