"""The simulated backend's HTTP server: OpenAI chat completions on 127.0.0.1, deterministic by seed.

Routes: POST /v1/chat/completions, GET /v1/models, GET /sim/stats, POST /sim/oracle, POST /sim/reset, POST
/sim/token_logprobs (a given text's per-token statistics for Min-K%++, simulator/token_stats.py), and the Files and Batches routes of simulator/batches.py (each batch line is answered by `answer_chat`).
`SimulatedServer` runs it on a background thread with its own event loop, so synchronous code, async
code and other processes can all call it; `python -m examiner.simulator` runs it as a process.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from array import array
import time
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache, partial
from typing import Any

from aiohttp import web

from examiner.simulator.behaviours import SimRequest, content_text, find_behaviour, score_scale
from examiner.simulator.faults import JSON_FAULTS, FaultPlan, malform_json, original_request, truncate_json
from examiner.simulator.batches import BATCH_OPTION_NAMES, SimBatches, add_batch_routes
from examiner.simulator.headers import HINTS, ROLE, STAGE
from examiner.simulator.logprobs import token_logprobs
from examiner.simulator.prompt_cache import CLOSING, PromptCache, frame
from examiner.simulator.prose import rng_for, stable_int, stable_uniform
from examiner.simulator.schema_faker import conform
from examiner.core.tokens import encoding

try:  # orjson (a langgraph dependency) is several times faster; the stdlib serves as well
    import orjson
except ImportError:  # pragma: no cover
    import json

    class orjson:  # type: ignore[no-redef]  # noqa: N801 - stands in for the module
        loads = staticmethod(json.loads)

        @staticmethod
        def dumps(value: Any) -> bytes:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

OPTION_NAMES = (
    "seed", "model", "knowledge", "recall", "answer_chars", "ignores_max_tokens", "targets_per_question",
    "judge_noise", "judge_difficulty",
    "judge_confidence", "pairwise_confidence", "returns_logprobs",
    "report_usage",
    "latency_s", "faults", "retry_after_s", "timeout_sleep_s", "prompt_cache", "reasoning_tokens", "degenerate",
    *BATCH_OPTION_NAMES,
)
"""Options a simulated endpoint understands (EndpointSpec.options); others are passed on to behaviours."""


_SIDE_CHANNEL = re.compile(r"\s?\[ref:[^\]]*\]|\s?\([^\s()]+:(?:known|wrong|declined)\)")




@lru_cache(maxsize=2048)
def _billed_tokens(text: str) -> array:
    """Billed cl100k tokens of a text (cached: system prompts repeat on every call).

    The `[ref:ID,...]` marker a simulated question carries for the simulated candidate is a side channel
    a real examiner would not write (a real question is ~40 tokens; the marker adds ~10 per target), so
    it is not billed, in the completion that writes it nor in the prompts that quote it. The same holds for
    the `(ID:known)` / `(ID:wrong)` / `(ID:declined)` claim markers of a simulated answer: the sentence before each marker
    stands for the claim, the marker only tells the simulated judge which unit it is about (~16 tokens).
    An array (4 bytes a token) keeps the prompt cache small."""
    return array("I", encoding().encode(_SIDE_CHANNEL.sub("", text), disallowed_special=()))


def _count(text: str) -> int:
    """How many billed tokens a text has."""
    return len(_billed_tokens(text))


def prompt_token_ids(messages: list[dict[str, Any]]) -> array:
    """The prompt as the token sequence a provider bills and caches: per message 3 framing tokens and its
    content, then 3 closing tokens (OpenAI's overhead, as examiner.core.tokens counts it)."""
    ids = array("I")
    for m in messages:
        ids.extend(frame(str(m.get("role", ""))))
        ids.extend(_billed_tokens(content_text(m.get("content"))))
    ids.extend(CLOSING)
    return ids


def _error(status: int, message: str, kind: str, headers: Mapping[str, str] | None = None) -> web.Response:
    return _json(status, _error_body(message, kind), headers)


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def _json(status: int, body: Any, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json", headers=headers)


class SimState:
    """Everything the handlers share: options, fault plan, counters, oracle."""

    def __init__(self, options: Mapping[str, Any] | None, seed: int | None) -> None:
        self.options: dict[str, Any] = dict(options or {})
        self.seed = int(seed if seed is not None else self.options.get("seed", 0) or 0)
        self.faults = FaultPlan(self.options, self.seed)
        self.batches = SimBatches(self.options, self.seed)
        self.report_usage = bool(self.options.get("report_usage", True))
        self.latency_s = float(self.options.get("latency_s", 0.0) or 0.0)
        self.caches_prompts = bool(self.options.get("prompt_cache", True))
        self.reasoning_tokens = max(0, int(self.options.get("reasoning_tokens", 0) or 0))
        self.oracle: dict[str, Any] = {}
        self.reset()

    def reset(self) -> None:
        self.seen: Counter[bytes] = Counter()
        self.requests = 0
        self.ok = 0
        self.bad_requests = 0
        self.fault_counts: Counter[str] = Counter()
        self.by_role: Counter[str] = Counter()
        self.models: set[str] = set()
        self.billed: dict[str, tuple[int, int]] = {}
        """Reply id -> (prompt, completion) tokens of every reply sent with choices: what was billed."""
        self.prompt_cache = PromptCache()

    def stats(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "ok": self.ok,
            "bad_requests": self.bad_requests,
            "faults": dict(self.fault_counts),
            "by_role": dict(self.by_role),
            "distinct_bodies": len(self.seen),
            "oracle_items": len(self.oracle),
            "billed": {reply_id: list(tokens) for reply_id, tokens in self.billed.items()},
            "batches": self.batches.stats(),
        }


STATE = web.AppKey("state", SimState)


def _response_format(body: Mapping[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """(schema, json_mode) from response_format."""
    fmt = body.get("response_format") or {}
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "json_schema":
        spec = fmt.get("json_schema") or {}
        schema = spec.get("schema")
        return (schema if isinstance(schema, dict) else None), True
    return None, kind == "json_object"


def _hints(headers: Mapping[str, str]) -> dict[str, Any]:
    """The `X-Examiner-Hints` header: a JSON object (absent: no hints). Raises ValueError otherwise."""
    raw = headers.get(HINTS)
    if not raw:
        return {}
    hints = orjson.loads(raw)
    if not isinstance(hints, dict):
        raise ValueError(f"{HINTS} must be a JSON object")
    return hints


def _choice(state: SimState, body: dict[str, Any], role: str, stage: str, hints: dict[str, Any], index: int,
            schema: dict[str, Any] | None, json_mode: bool, fault: str | None,
            body_key: bytes) -> tuple[dict[str, Any], int, int]:
    """One choice, its completion tokens and the hidden reasoning tokens among them (the endpoint's
    `reasoning_tokens` option, taken out of max_tokens first, as a reasoning model spends them)."""
    req = SimRequest(body=body, role=role, stage=stage, index=index, seed=state.seed, options=state.options,
                     oracle=state.oracle, schema=schema, json_mode=json_mode, hints=hints)
    result = find_behaviour(role, stage)(req)
    if isinstance(result, str):
        content = result
    else:
        if schema is not None:
            result = conform(result, schema, req.rng("conform"))
        content = orjson.dumps(result).decode()
    finish = "stop"
    if fault == "malformed_json":
        content = malform_json(content, rng_for(state.seed, body_key, index, "malform"))
    elif fault == "truncated_json":
        content = truncate_json(content, rng_for(state.seed, body_key, index, "truncate"))
        finish = "length"
    enc = encoding()
    tokens = enc.encode(content, disallowed_special=())
    hidden = state.reasoning_tokens if req.max_tokens is None else min(state.reasoning_tokens, req.max_tokens)
    # `ignores_max_tokens`: an endpoint that writes past the request's max_tokens (a runaway target)
    limit = None if req.max_tokens is None or req.option("ignores_max_tokens", False) else req.max_tokens - hidden
    if limit is not None and len(tokens) > limit:
        tokens = tokens[: max(0, limit)]
        content = enc.decode(tokens)
        finish = "length"
    choice: dict[str, Any] = {"index": index, "message": {"role": "assistant", "content": content},
                              "finish_reason": finish, "logprobs": None}
    if body.get("logprobs") and req.option("returns_logprobs", True):  # False: an endpoint that ignores it
        top = int(body.get("top_logprobs") or 0)
        key = stable_int(state.seed, req.prompt_key, *req.sampling_salt, index)
        choice["logprobs"] = {"content": token_logprobs(content, top, key, score_scale(req), req.chosen),
                              "refusal": None}
    return choice, _count(content) + hidden, hidden


async def chat_completions(request: web.Request) -> web.Response:
    status, body, headers = await answer_chat(request.app[STATE], await request.read(), request.headers)
    return _json(status, body, headers)


async def answer_chat(state: SimState, raw: bytes, headers: Mapping[str, str],
                      ) -> tuple[int, dict[str, Any], dict[str, str] | None]:
    """(HTTP status, JSON body, extra headers) of one chat completion request: the reply or the error
    the simulated model gives for the request body `raw` with its request `headers`."""
    state.requests += 1
    try:
        body = orjson.loads(raw)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise ValueError("body must be an object with a `messages` list")
        hints = _hints(headers)
    except ValueError as exc:
        state.bad_requests += 1
        return 400, _error_body(f"invalid request: {exc}", "invalid_request_error"), None
    if body.get("stream"):
        state.bad_requests += 1
        return 400, _error_body("the simulated backend does not stream", "invalid_request_error"), None

    body_key = hashlib.blake2b(raw, digest_size=12).digest()
    seen = state.seen[body_key]
    state.seen[body_key] = seen + 1
    schema, json_mode = _response_format(body)
    fault = state.faults.decide(body_key.hex(), seen)
    if fault in JSON_FAULTS and not json_mode:
        fault = None
    role = headers.get(ROLE, "generic").strip().lower() or "generic"
    stage = headers.get(STAGE, "").strip().lower()
    stage = "" if stage == "-" else stage
    state.by_role[role] += 1

    if state.latency_s > 0:
        await asyncio.sleep(state.latency_s * (0.5 + stable_uniform(state.seed, "latency", body_key, seen)))
    if fault is not None:
        state.fault_counts[fault] += 1
    if fault == "rate_limit":
        wait = state.faults.retry_after_s
        return 429, _error_body("simulated rate limit", "rate_limit_exceeded"), \
            {"Retry-After": f"{wait:g}", "retry-after-ms": f"{wait * 1000:g}"}
    if fault == "server_error":
        return 500, _error_body("simulated server error", "server_error"), None
    if fault == "timeout":
        await asyncio.sleep(state.faults.timeout_sleep_s)

    model = str(body.get("model", "sim"))
    state.models.add(model)
    n = max(1, int(body.get("n") or 1))
    choices = []
    completion = reasoning = 0
    asked, asked_hints = original_request(body, hints)
    for index in range(n):
        choice, used, hidden = _choice(state, asked, role, stage, asked_hints, index, schema, json_mode, fault,
                                       body_key)
        choices.append(choice)
        completion += used
        reasoning += hidden
    if fault == "empty_choices":
        choices = []
    out: dict[str, Any] = {
        "id": f"chatcmpl-sim-{body_key.hex()}-{seen}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "system_fingerprint": f"sim-{state.seed}",
    }
    prompt_ids = prompt_token_ids(body["messages"])
    prompt = len(prompt_ids)
    cached = state.prompt_cache.cached_tokens(model, prompt_ids) if state.caches_prompts else 0
    if state.report_usage:
        out["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                        "prompt_tokens_details": {"cached_tokens": cached},
                        "completion_tokens_details": {"reasoning_tokens": reasoning}}
    if choices:  # a reply with choices is what a provider bills, whether or not the client receives it
        state.billed[out["id"]] = (prompt, completion)
    if fault is None:
        state.ok += 1
    return 200, out, None


async def list_models(request: web.Request) -> web.Response:
    state: SimState = request.app[STATE]
    names = sorted(state.models | {str(state.options.get("model", "sim"))})
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "examiner-simulated"} for name in names]
    return web.Response(body=orjson.dumps({"object": "list", "data": data}), content_type="application/json")


async def sim_stats(request: web.Request) -> web.Response:
    return web.Response(body=orjson.dumps(request.app[STATE].stats()), content_type="application/json")


async def sim_oracle(request: web.Request) -> web.Response:
    state: SimState = request.app[STATE]
    try:
        items = orjson.loads(await request.read()).get("items")
        if not isinstance(items, dict):
            raise ValueError
    except (ValueError, AttributeError):
        return _error(400, 'expected {"items": {"<sha1 of text>": label}}', "invalid_request_error")
    state.oracle.update(items)
    return web.Response(body=orjson.dumps({"oracle_items": len(state.oracle)}), content_type="application/json")


async def sim_token_logprobs(request: web.Request) -> web.Response:
    """{"text": ...} -> the text's per-token log-probabilities with their positions' means and sds."""
    from examiner.simulator.token_stats import token_logprobs as text_token_stats

    state: SimState = request.app[STATE]
    try:
        text = orjson.loads(await request.read()).get("text")
        if not isinstance(text, str):
            raise ValueError
    except (ValueError, AttributeError):
        return _error(400, 'expected {"text": "<the text to score>"}', "invalid_request_error")
    body = text_token_stats(text, state.options, state.oracle, state.seed)
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def sim_reset(request: web.Request) -> web.Response:
    request.app[STATE].reset()
    return web.Response(body=b"{}", content_type="application/json")


def make_app(state: SimState) -> web.Application:
    """The aiohttp application over `state`."""
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[STATE] = state
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/sim/stats", sim_stats)
    app.router.add_post("/sim/oracle", sim_oracle)
    app.router.add_post("/sim/reset", sim_reset)
    app.router.add_post("/sim/token_logprobs", sim_token_logprobs)
    add_batch_routes(app, state.batches, partial(answer_chat, state))
    return app


async def start_site(state: SimState, host: str = "127.0.0.1", port: int = 0) -> tuple[web.AppRunner, str]:
    """Start serving on the running loop; returns the runner (to clean up) and the base URL."""
    runner = web.AppRunner(make_app(state), access_log=None, handler_cancellation=True, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True, backlog=2048)  # bursts of new connections from many endpoints
    await site.start()
    bound = runner.addresses[0][1]
    return runner, f"http://{host}:{bound}/v1"


class SimulatedServer:
    """The simulated backend on a background thread; `start()` returns its base URL.

    `options` are a simulated endpoint's EndpointSpec.options; `seed` (default: options["seed"] or 0)
    fixes every random choice. Use as `with SimulatedServer(opts) as url:` or `async with`.
    """

    def __init__(self, options: Mapping[str, Any] | None = None, seed: int | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.state = SimState(options, seed)
        self.host = host
        self.port = port
        self.base_url: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    @property
    def seed(self) -> int:
        return self.state.seed

    def start(self) -> str:
        """Start serving (idempotent) and return the base URL, e.g. http://127.0.0.1:PORT/v1."""
        if self.base_url is not None:
            return self.base_url
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                self._runner, self.base_url = loop.run_until_complete(start_site(self.state, self.host, self.port))
            except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                if self._runner is not None:
                    loop.run_until_complete(self._runner.cleanup())
                loop.close()

        self._thread = threading.Thread(target=run, name="examiner-simulated", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]
        assert self.base_url is not None
        return self.base_url

    def stop(self) -> None:
        """Stop serving and join the thread (idempotent)."""
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        self._loop = None
        self.base_url = None

    def stats(self) -> dict[str, Any]:
        """Counters, as GET /sim/stats returns them."""
        return self.state.stats()

    def register_oracle(self, items: Mapping[str, Any]) -> None:
        """Gold labels by sha1 of item text, as POST /sim/oracle registers them."""
        self.state.oracle.update(items)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> str:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)
