"""Transport: getting one request answered by an endpoint's servers. Clients, retries, replicas, failover.

A request goes to the replica `choose` picks (examiner.llm.replicas), under that replica's tokens-per-minute
window and concurrency slots, with up to `max_attempts` HTTP attempts and back-off (429 honours
Retry-After; 5xx, timeouts, connection errors, empty and foreign replies are retried). When its attempts
fail for want of a working server, it moves to another replica not yet tried. n samples from an endpoint
that returns one choice per request are n requests with seeds seed, seed+1, ... (`send`).

A server that rejects `response_format` (HTTP 400/422) gets the request again in a weaker structured-output
mode (json_schema -> json_object -> text): the attempt carries its own mode, and the endpoint remembers the
weakest mode its server accepted for the calls that follow (`Endpoint.structured_mode`).

The reply is parsed once into a typed `ChatReply` (examiner.llm.reply). Request metadata comes from the
endpoint's provider plugin (examiner.llm.providers): only a simulated endpoint gets any.

Each attempt has two clocks: the client's `timeout_s`, which httpx applies to each step (connect, send,
each read), and the endpoint's whole-attempt deadline (EndpointSpec.deadline_s) over all of them, so a
reply that drips in a few bytes at a time ends the attempt at its deadline instead of holding the run.
The caller's `Departures` hears of every attempt (examiner.llm.sending): before it waits for a slot,
when it is sent, and how it ended, with its request when it may have been billed though its reply is
not used: a timeout or lost connection after sending, an HTTP 200 whose JSON body is cut or holds no
choice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import httpx
import openai
from openai import AsyncOpenAI
from openai._legacy_response import LegacyAPIResponse
from openai.types.chat import ChatCompletion

from examiner.core.config import EndpointSpec
from examiner.core.errors import ConfigError
from examiner.core.redact import redact_text
from examiner.core.tokens import count_message_tokens
from examiner.llm.call import CallMeta
from examiner.llm.providers import Provider, Providers
from examiner.llm.replicas import Replica, choose
from examiner.llm.reply import ChatReply, Messages
from examiner.llm.structured import StructuredMode
from examiner.llm.types import Attempt

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0

_WEAKER: dict[StructuredMode, StructuredMode] = {"json_schema": "json_object", "json_object_schema": "json_object",
                                                 "json_object": "text", "text": "text"}
"""The structured-output mode to try after a server rejected `response_format` in a mode."""
_STRENGTH: dict[StructuredMode, int] = {"json_schema": 3, "json_object_schema": 3, "json_object": 2, "text": 1}


class Departures(Protocol):
    """What a request's sender hears of its attempts (examiner.llm.sending.Sending is the gateway's)."""

    async def ready(self) -> None:
        """Before an attempt waits for its replica's slot."""

    def leaving(self) -> None:
        """The attempt holds its slot and is sent now."""

    def landed(self, status: str, lost: "ChatRequest | None" = None) -> None:
        """The attempt ended with `status`; `lost`: its request, when it may have been billed though its
        reply is not used."""


class Unwatched:
    """Departures nobody listens to."""

    async def ready(self) -> None:
        return None

    def leaving(self) -> None:
        return None

    def landed(self, status: str, lost: "ChatRequest | None" = None) -> None:
        return None


class ModelCallError(Exception):
    """A call that failed after all its attempts (or with a non-retryable error)."""

    def __init__(self, message: str, attempts: list[Attempt]) -> None:
        super().__init__(message)
        self.attempts = attempts


class NotAnOpenAIEndpoint(ConfigError):
    """Every attempt of a call was answered with something that is not a chat completion in JSON (an HTML
    page, plain text, other JSON): base_url points to a web page, a login portal or another API. One such
    reply is retried like a torn one; when all are foreign, the command stops with one line naming the
    endpoint and what it sent, since no retry or later call can fix it."""

    def __init__(self, message: str, attempts: list[Attempt]) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class ChatRequest:
    """One request as sent: the messages and the body's other fields (generation parameters, n and the
    `response_format` of `mode`)."""

    messages: Messages
    body: dict[str, Any]
    mode: StructuredMode = "text"
    """The structured-output mode `body`'s response_format (if any) was built for."""

    @property
    def n(self) -> int:
        return int(self.body.get("n", 1))

    @property
    def max_tokens(self) -> int:
        return int(self.body["max_tokens"])

    def json_fields(self) -> dict[str, Any]:
        """The messages and the body's other fields, for the SDK's `extra_body`, in the order its own
        `create` sends them (model, messages, then the other fields by name), so a server gets the same
        bytes (the simulator's fault draws hash them). Passed this way, the SDK does not walk the messages
        and the response format's JSON schema against its typed parameters before each request, which
        cost 0.36 ms of CPU per call and changes nothing in plain JSON fields such as these."""
        return {"messages": self.messages, **{name: self.body[name] for name in sorted(self.body)}}

    def single(self, seed: int) -> "ChatRequest":
        """One of the n single-choice requests a fan-out sends."""
        return replace(self, body=dict(self.body, n=1, seed=seed))

    def rejected_format(self) -> "ChatRequest":
        """This request in the next weaker structured-output mode, after the server rejected its
        response_format: json_object keeps JSON mode without the schema, text drops the field."""
        mode = _WEAKER[self.mode]
        body = {k: v for k, v in self.body.items() if k != "response_format"}
        if mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return replace(self, body=body, mode=mode)


class Endpoint:
    """Replicas (clients and limits), provider and learned structured-output mode of one named endpoint
    (created inside the event loop). `base_url` is the first replica's: the one batch mode uses."""

    def __init__(self, name: str, spec: EndpointSpec, provider: Provider, base_urls: Sequence[str]) -> None:
        self.name = name
        self.spec = spec
        self.provider = provider
        self.replicas = [Replica(url, spec) for url in base_urls]
        self.base_url = self.replicas[0].base_url
        self.client: AsyncOpenAI = self.replicas[0].client
        self._mode: StructuredMode = spec.structured_output

    @property
    def structured_mode(self) -> StructuredMode:
        """The configured mode, or the weakest one a rejection of response_format led to."""
        return self._mode

    def accepts_only(self, mode: StructuredMode) -> None:
        """Remember that the server rejected a stronger mode than `mode` (never raises it again)."""
        if _STRENGTH[mode] < _STRENGTH[self._mode]:
            self._mode = mode

    @property
    def identity(self) -> str:
        """What the cache keys on: the configured URL of an endpoint that has one, or, for a server
        examiner starts itself, its provider and options (its port changes from run to run, its replies
        do not)."""
        if self.spec.provider == "openai" or (self.spec.provider == "simulated" and self.spec.base_url):
            return redact_text(self.base_url)  # without credentials: a changed password keeps the cache
        return f"{self.spec.provider}:{sorted(self.spec.options.items())!r}"

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.client.close()


def _chat_completion(raw: LegacyAPIResponse[ChatCompletion]) -> ChatCompletion | None:
    """The parsed chat completion of a raw 2xx reply, or None when the body is not one."""
    try:
        completion: object = raw.parse()
    except ValueError:  # a body announced as JSON that does not parse
        return None
    if isinstance(completion, ChatCompletion) and isinstance(getattr(completion, "choices", None), list):
        return completion
    return None


def _cut_json(raw: LegacyAPIResponse[ChatCompletion]) -> bool:
    """Whether a 2xx body that is no chat completion is a JSON object cut short (a reply torn on its way,
    which the server may have billed), rather than another page or API."""
    text = raw.http_response.text.lstrip()
    if not text.startswith("{"):
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def _sent(exc: openai.APIConnectionError) -> bool:
    """Whether a timeout or a connection error struck after the request was sent (it may have been
    processed): anything but a failure to connect or to get a pooled connection."""
    return not isinstance(exc.__cause__, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))


def _foreign_reply(ep: Endpoint, raw: LegacyAPIResponse[ChatCompletion]) -> str:
    """What an endpoint sent instead of a chat completion: status, content type and the body's start."""
    content_type = raw.headers.get("content-type") or "no content type"
    body = " ".join(raw.http_response.text.split())[:60]
    return (f"endpoint {ep.name} ({ep.base_url}) answered HTTP {raw.status_code} with {content_type}, not a "
            f"chat completion in JSON (body starts {body!r}); is base_url the root of an OpenAI-compatible "
            "API (e.g. http://host:8000/v1)?")


class Transport:
    """The endpoints of a gateway and the sending of requests to them. `on_failure` is told of each
    request that failed for good (every replica tried, or every reply foreign)."""

    def __init__(self, on_failure: Callable[[], None]) -> None:
        self._providers = Providers()
        self._endpoints: dict[str, Endpoint] = {}
        self._on_failure = on_failure

    def known(self, name: str) -> Endpoint | None:
        """The endpoint `name` if it was opened already."""
        return self._endpoints.get(name)

    async def endpoint(self, name: str, spec: EndpointSpec) -> Endpoint:
        """The endpoint's clients, created on first use. A managed server is started in a worker thread
        (it blocks for seconds); the HTTP clients are made here, in the event loop's thread."""
        if name not in self._endpoints:
            provider = self._providers.of(spec)
            base_url = spec.base_url if spec.provider == "openai" else await asyncio.to_thread(provider.base_url, spec)
            if name not in self._endpoints:  # another task may have finished first
                self._endpoints[name] = Endpoint(name, spec, provider, [base_url or "", *spec.replicas])
        return self._endpoints[name]

    async def aclose(self) -> None:
        """Close every client and stop the managed servers."""
        for endpoint in self._endpoints.values():
            await endpoint.aclose()
        self._endpoints.clear()
        self._providers.stop_all()

    async def send(self, ep: Endpoint, request: ChatRequest, meta: CallMeta,
                   watch: Departures | None = None) -> ChatReply:
        """The reply to `request`: one request, or n single-choice ones with distinct seeds for an endpoint
        that returns one choice per request. `watch` hears of every attempt."""
        watch = watch if watch is not None else Unwatched()
        if request.n > 1 and not ep.spec.supports_n:
            base_seed = int(request.body.get("seed") or 0)
            parts = await asyncio.gather(*(self._failover(ep, request.single(base_seed + i), meta, watch)
                                           for i in range(request.n)))
            return parts[0].merged(parts[1:])
        return await self._failover(ep, request, meta, watch)

    async def _failover(self, ep: Endpoint, request: ChatRequest, meta: CallMeta, watch: Departures) -> ChatReply:
        """One request with its attempts on the replica `choose` picks (under that replica's token
        window); when they fail for want of a working server (not a request the server refused), the
        request goes to another replica not yet tried, until one answers or none is left. A reply from
        a replicated endpoint names the replica that answered and carries every attempt made."""
        earlier: list[Attempt] = []
        tried: list[Replica] = []
        while (replica := choose(ep.replicas, tried)) is not None:
            tried.append(replica)
            replica.outstanding += 1
            try:
                if replica.tpm is not None:
                    await replica.tpm.acquire(count_message_tokens(request.messages) + request.max_tokens * request.n)
                reply = await self._attempts(ep, replica, request, meta, watch)
            except ModelCallError as exc:
                if len(ep.replicas) > 1:
                    exc.attempts[:] = [Attempt(a.status, a.latency_s, a.wait_s, f"{replica.base_url}: {a.detail}")
                                       for a in exc.attempts]
                earlier += exc.attempts
                if not server_failure(exc.attempts):
                    raise ModelCallError(str(exc), earlier) from None
                if len(tried) == len(ep.replicas):
                    self._on_failure()
                    message = str(exc) if len(tried) == 1 else \
                        f"{ep.name}: no usable reply from any of its {len(tried)} replicas ({len(earlier)} attempts)"
                    raise ModelCallError(message, earlier) from None
                log.warning("endpoint %s: replica %s failed (%s); the call goes to another replica",
                            ep.name, replica.base_url, exc.attempts[-1].status)
                continue
            finally:
                replica.outstanding -= 1
            if len(ep.replicas) > 1:
                reply = reply.model_copy(update={"replica": replica.base_url, "attempts": earlier + reply.attempts})
            return reply
        raise AssertionError("an endpoint has at least one replica")

    async def _attempts(self, ep: Endpoint, replica: Replica, request: ChatRequest, meta: CallMeta,
                        watch: Departures) -> ChatReply:
        """Up to max_attempts HTTP attempts on one replica, with back-off, each within the endpoint's
        whole-attempt deadline; a replica marked down meanwhile (by this call's failures or others') is left
        after the failed attempt when another is up."""
        spec = ep.spec
        attempts: list[Attempt] = []
        headers = ep.provider.request_headers(meta)
        for number in range(1, spec.max_attempts + 1):
            await watch.ready()
            began = time.perf_counter()
            wait: float | None = None
            try:
                async with replica.slots:
                    replica.sent += 1
                    watch.leaving()
                    raw = await asyncio.wait_for(replica.client.chat.completions.with_raw_response.create(
                        model=spec.model, messages=[], extra_headers=headers or None,
                        extra_body=request.json_fields()), spec.deadline_s)
                completion = _chat_completion(raw)
                latency = time.perf_counter() - began
                if completion is None:
                    attempts.append(Attempt("foreign", latency, detail=_foreign_reply(ep, raw)))
                    watch.landed("foreign", request if _cut_json(raw) else None)
                    wait = backoff(spec, number)
                elif not completion.choices:
                    attempts.append(Attempt("empty", latency, detail="no choices in reply"))
                    watch.landed("empty", request)
                    wait = backoff(spec, number)
                else:
                    attempts.append(Attempt("ok", latency))
                    watch.landed("ok")
                    replica.succeeded()
                    return ChatReply.from_completion(completion, request.messages, attempts,
                                                     raw.headers.get("x-request-id"))
            except asyncio.TimeoutError:  # the whole-attempt deadline (TimeoutError from Python 3.11)
                attempts.append(Attempt("timeout", time.perf_counter() - began,
                                        detail=f"no whole reply within the attempt deadline of {spec.deadline_s:g} s"))
                watch.landed("timeout", request)
                wait = backoff(spec, number)
                replica.failed()
            except openai.RateLimitError as exc:
                wait = retry_after(exc) or backoff(spec, number)
                attempts.append(Attempt("429", time.perf_counter() - began, detail=short(exc)))
                watch.landed("429")
            except openai.APITimeoutError as exc:
                attempts.append(Attempt("timeout", time.perf_counter() - began, detail=short(exc)))
                watch.landed("timeout", request if _sent(exc) else None)
                wait = backoff(spec, number)
                replica.failed()
            except openai.APIConnectionError as exc:
                attempts.append(Attempt("connection", time.perf_counter() - began, detail=short(exc)))
                watch.landed("connection", request if _sent(exc) else None)
                wait = backoff(spec, number)
                replica.failed()
            except openai.APIStatusError as exc:
                attempts.append(Attempt(str(exc.status_code), time.perf_counter() - began, detail=short(exc)))
                watch.landed(str(exc.status_code))
                if exc.status_code >= 500:
                    wait = backoff(spec, number)
                    replica.failed()
                elif (exc.status_code in (400, 422) and "response_format" in request.body and request.mode != "text"
                      and refuses_reply_format(exc)):
                    request = request.rejected_format()
                    ep.accepts_only(request.mode)
                    log.warning("endpoint %s rejected response_format; falling back to %s", ep.name, request.mode)
                    wait = 0.0
                else:
                    raise ModelCallError(f"{ep.name}: HTTP {exc.status_code}: {short(exc)}", attempts) from None
            if server_failure(attempts) and not replica.up() and any(r.up() for r in ep.replicas):
                break  # this server is down and another is up: the call goes there now
            if number < spec.max_attempts and wait is not None:
                attempts[-1] = Attempt(attempts[-1].status, attempts[-1].latency_s, wait, attempts[-1].detail)
                await asyncio.sleep(wait)
        summary = ", ".join(a.status for a in attempts)
        if all(a.status == "foreign" for a in attempts):
            self._on_failure()
            raise NotAnOpenAIEndpoint(attempts[-1].detail, attempts)
        raise ModelCallError(f"{ep.name}: no usable reply after {len(attempts)} attempts ({summary})", attempts)


def backoff(spec: EndpointSpec, number: int) -> float:
    """The wait before attempt `number` + 1: full jitter over an exponential ceiling."""
    return random.uniform(0, min(MAX_BACKOFF_S, spec.backoff_base_s * 2 ** (number - 1)))


def retry_after(exc: openai.APIStatusError) -> float | None:
    """The wait a 429's Retry-After header asks for (capped), or None."""
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return min(MAX_BACKOFF_S * 2, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None


def server_failure(attempts: Sequence[Attempt]) -> bool:
    """Whether a request failed for want of a working server (its last attempt a connection error, a
    timeout, a 429, a 5xx or an unusable reply), not because the server refused the request itself (4xx):
    such a request may succeed on another replica."""
    status = attempts[-1].status if attempts else ""
    return not (status.isdigit() and 400 <= int(status) < 500 and status != "429")


FORMAT_WORDS = ("format", "schema", "structured", "grammar", "guided")
"""Words an endpoint's 400 about the reply format is taken to hold (`response_format`, `json_schema` and
`json_object` hold the first two; "structured outputs", grammar-based and guided decoding the others)."""


def refuses_reply_format(exc: openai.APIStatusError) -> bool:
    """Whether a 400 or 422 is the endpoint refusing the reply format asked for, so the call may ask for a looser
    one: its error names the format, or gives no reason at all. Any other bad request (a prompt past the
    context, a setting the server names) is the call's own error: a looser format would only repeat it, and
    would leave the endpoint on that looser format for the rest of the run."""
    body = exc.body
    reason = body if isinstance(body, str) else json.dumps(body) if body not in (None, {}, "") else ""
    return not reason.strip() or any(word in reason.lower() for word in FORMAT_WORDS)


def short(exc: BaseException) -> str:
    """An error's first line, short enough for a log line."""
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


__all__ = ["ChatRequest", "Departures", "Endpoint", "ModelCallError", "NotAnOpenAIEndpoint", "Transport",
           "Unwatched", "server_failure"]
