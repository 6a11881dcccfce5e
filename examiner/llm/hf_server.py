"""A transformers model folder served over the OpenAI chat-completions API (`examiner serve-local --model`).

Why: a judge fine-tuned by `examiner finetune` is a transformers folder, which llama-cpp-python cannot
read; serving it over the same protocol as every other endpoint lets a config endpoint
(`provider: openai, base_url: http://127.0.0.1:PORT/v1`) name it as a judge, with the gateway's retries,
cache and ledger. The standard library's HTTP server is enough: requests are answered one at a time
(one model, a lock), like the llama.cpp server examiner starts for the embedded model.

What it honours: `messages`, `max_tokens` (default 256), `temperature` (0 = greedy), `logprobs` and
`top_logprobs` (up to 20; from the raw logits, examiner/llm/hf_logprobs.py), so a served judge can be a
cascade's cheap judge with log-probability confidence; `usage` is reported. `response_format` is accepted
and not enforced (no grammar): judges parse and validate replies anyway. `n` > 1 and tools are not offered.

Who may call it: `serve_model` requires an API key (`Authorization: Bearer KEY`; $EXAMINER_SERVE_KEY, else
one generated and printed at start), so another user of the machine, or a web page the browser opens,
cannot use the model; a request whose Host header is not the bound address is refused (421: a DNS
rebinding page names its own host), and so is any request a browser sends from a web page (it carries
an Origin header; 403): no CORS header is ever sent, so no web origin reads a reply.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from examiner.llm.encoder_chat import EncoderChat
from examiner.llm.encoder_judge import is_encoder_judge
from examiner.llm.hf_logprobs import generate_scored
from examiner.llm.hf_models import generate_reply, load_model

MAX_BODY = 8 * 1024 * 1024
KEY_ENV = "EXAMINER_SERVE_KEY"
"""The environment variable `serve_model` reads its API key from (one is generated when it is unset)."""


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The Host header values a server bound to `host`:`port` answers: the address itself and, bound to
    loopback, its usual names; None (any) for a wildcard bind, where only the key guards it."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    if address is not None and address.is_unspecified:
        return None
    names = {host}
    if host == "localhost" or (address is not None and address.is_loopback):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    if address is not None and address.version == 6:
        names.add(f"[{address}]")
    return frozenset(name for base in names for name in (f"{base}:{port}", *((base,) if port == 80 else ())))


class Completer(Protocol):
    """What the server serves: a name and a chat completion per request body (ChatModel, or the encoder
    judge's examiner.llm.encoder_chat.EncoderChat)."""

    name: str

    def complete(self, body: dict[str, Any]) -> dict[str, Any]: ...


class ChatModel:
    """A loaded model and tokenizer, answering one chat request at a time."""

    def __init__(self, model: Any, tokenizer: Any, name: str, max_prompt_tokens: int | None = None) -> None:
        self.model, self.tokenizer, self.name = model, tokenizer, name
        self.max_prompt_tokens = max_prompt_tokens
        self._lock = threading.Lock()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The OpenAI chat-completion object answering a request body (ValueError for a bad one)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list")
        chat = []
        for m in messages:
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise ValueError("each message needs a role and a content")
            content = m.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            chat.append({"role": m["role"], "content": str(content or "")})
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
        temperature = float(body.get("temperature") or 0.0)
        logprobs = None
        with self._lock:
            if body.get("logprobs"):
                scored = generate_scored(self.model, self.tokenizer, chat, max_new_tokens=max_tokens,
                                         temperature=temperature, top_logprobs=int(body.get("top_logprobs") or 0),
                                         max_prompt_tokens=self.max_prompt_tokens)
                text, prompt, completion = scored.text, scored.prompt_tokens, scored.completion_tokens
                logprobs = {"content": scored.logprobs, "refusal": None}
            else:
                text, prompt, completion = generate_reply(self.model, self.tokenizer, chat,
                                                          max_new_tokens=max_tokens, temperature=temperature,
                                                          max_prompt_tokens=self.max_prompt_tokens)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": self.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": logprobs,
                         "finish_reason": "length" if completion >= max_tokens else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }


def _handler(chat: Completer, key: str | None, hosts: frozenset[str] | None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
            return

        def _refused(self) -> bool:
            """Answer and True when the request may not be served: a browser's (Origin), another host's
            name (Host), or no valid key."""
            if self.headers.get("Origin") is not None:
                self._error(403, "requests from web pages are refused (this server sends no CORS headers)")
                return True
            if hosts is not None and (self.headers.get("Host") or "").lower() not in hosts:
                self._error(421, "this server answers only requests addressed to the address it listens on")
                return True
            if key is not None:
                given = self.headers.get("Authorization") or ""
                if not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
                    self._error(401, f"a valid API key is required (Authorization: Bearer KEY; see ${KEY_ENV})")
                    return True
            return False

        def do_OPTIONS(self) -> None:  # noqa: N802 - the stdlib's name; a CORS preflight gets no permission
            self._error(403, "requests from web pages are refused (this server sends no CORS headers)")

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            if self._refused():
                return
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": chat.name, "object": "model"}]})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            if self._refused():
                return
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self._error(400, "a JSON body of at most 8 MiB is required")
                return
            try:
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise ValueError("the body must be a JSON object")
                self._send(200, chat.complete(body))
            except (ValueError, TypeError) as exc:
                self._error(400, str(exc))
            except Exception as exc:  # noqa: BLE001 - the model failed: an answer, not a dropped connection
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error"}})

    return Handler


def make_server(chat: Completer, host: str = "127.0.0.1", port: int = 0, key: str | None = None) -> ThreadingHTTPServer:
    """The HTTP server (not yet serving); port 0 picks a free one (`server.server_address[1]`). `key`: the
    API key every request must carry (None: none, for a test's own server); the Host and Origin checks
    always apply."""
    server = ThreadingHTTPServer((host, port), BaseHTTPRequestHandler)
    server.RequestHandlerClass = _handler(chat, key, allowed_hosts(host, int(server.server_address[1])))
    server.daemon_threads = True
    return server


def serve_model(path: Path, host: str = "127.0.0.1", port: int = 8077, name: str | None = None,
                key: str | None = None) -> None:
    """Load a model folder and serve it until Ctrl-C, to callers with the API key (`key`, else
    $EXAMINER_SERVE_KEY, else a new one, printed)."""
    key = key or os.environ.get(KEY_ENV) or None
    generated = key is None
    key = key or secrets.token_urlsafe(24)
    chat: Completer
    if is_encoder_judge(path):  # `examiner distil --student encoder` output: answers pairwise prompts
        chat = EncoderChat(path, name)
    else:
        model, tokenizer = load_model(path)
        chat = ChatModel(model, tokenizer, name or path.name)
    server = make_server(chat, host, port, key)
    print(f"OpenAI-compatible endpoint: http://{host}:{server.server_address[1]}/v1  (model: {chat.name}); "
          "Ctrl-C to stop", flush=True)
    if generated:
        print(f"API key (generated; set {KEY_ENV} to choose one): {key}\n  in examiner's configuration: "
              f"api_key_env: {KEY_ENV} on the endpoint, with {KEY_ENV}={key} in its environment", flush=True)
    else:
        print(f"API key: the value of {KEY_ENV}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopping", flush=True)
    finally:
        server.server_close()
