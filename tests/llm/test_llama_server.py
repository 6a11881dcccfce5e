"""`python -m examiner.llm.llama_server`: the stock llama-cpp-python server with weight repacking off (the
workaround for the crash on the first completion), every argument handed on unchanged; and `examiner doctor`'s
hint naming it when an endpoint that answers drops the connection on a completion."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from examiner.cli.commands import setup
from examiner.core.config import EndpointSpec, Settings
from examiner.llm import llama_server


def test_no_repack_turns_the_extra_buffers_off(monkeypatch: pytest.MonkeyPatch) -> None:
    bindings = pytest.importorskip("llama_cpp.llama_cpp")
    monkeypatch.setattr(bindings, "llama_model_default_params", bindings.llama_model_default_params)  # restored after
    if not hasattr(bindings.llama_model_default_params(), "use_extra_bufts"):
        assert llama_server.no_repack() is False
        return
    assert bindings.llama_model_default_params().use_extra_bufts is True  # llama.cpp's default: repack
    assert llama_server.no_repack() is True and llama_server.no_repack() is True  # a second call patches nothing more
    assert bindings.llama_model_default_params().use_extra_bufts is False
    assert bindings.llama_model_default_params().n_gpu_layers == bindings.llama_model_default_params().n_gpu_layers


def test_the_arguments_reach_the_stock_server(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(llama_server, "no_repack", lambda: True)
    monkeypatch.setattr(llama_server.runpy, "run_module",
                        lambda name, **kw: seen.update(name=name, argv=list(sys.argv), **kw))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    llama_server.main(["--model", "m.gguf", "--port", "8000"])
    assert seen == {"name": "llama_cpp.server", "argv": ["llama_cpp.server", "--model", "m.gguf", "--port", "8000"],
                    "run_name": "__main__", "alter_sys": True}


@pytest.fixture()
def dropping_server() -> Iterator[int]:
    """A server that answers GET /models and drops the connection of every completion, as a llama-cpp-python
    server that crashes on its first completion looks from outside (without dying, so retries see it too)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(50)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                request = conn.recv(65536)
                if request.startswith(b"GET") and b"/models" in request.split(b"\r\n", 1)[0]:
                    body = b'{"object": "list", "data": []}'
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                 + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


def _settings(port: int) -> Settings:
    spec = EndpointSpec(base_url=f"http://127.0.0.1:{port}/v1", model="mine", max_attempts=2, backoff_base_s=0.01,
                        timeout_s=5)
    return Settings(endpoints={"mine": spec}, roles={"candidate": "mine"})


def test_doctor_names_the_workaround_when_a_live_server_drops_completions(dropping_server: int) -> None:
    name, ok, detail = setup._check("endpoint mine", setup._endpoint_probe(_settings(dropping_server), "mine"))
    assert not ok
    assert "python -m examiner.llm.llama_server" in detail and "--no-repack" in detail, detail


def test_doctor_gives_no_such_hint_when_nothing_listens() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the doctor asks: nothing listens there
    name, ok, detail = setup._check("endpoint mine", setup._endpoint_probe(_settings(port), "mine"))
    assert not ok and "llama_server" not in detail, detail
