"""The one gateway to models. Nothing else in examiner talks to a model endpoint.

Every call goes: cache lookup -> budget reservation -> tokens-per-minute window -> concurrency slot ->
HTTP attempts with back-off (429 honours Retry-After; 5xx, timeouts, connection errors and empty
replies are retried) -> structured-output parsing with up to `max_repairs` re-asks. The ledger is
write-ahead: a request is recorded as `started` (with its worst-case cost) before it is sent and its
outcome follows, so a kill leaves calls whose outcome is unknown visible (see examiner.llm.ledger).
Each outcome is priced by EndpointSpec.cost_usd from the reply's `usage`, with the cached-input,
cache-write and reasoning details where the endpoint reports them (`_record`, with `batch=True` for a reply
that came through a provider's batch API).
All traffic uses the `openai` SDK's AsyncOpenAI client, so any OpenAI-compatible server works.
An endpoint in batch mode sends its first requests through the provider's Batch API instead of one by
one (examiner.llm.batch); what it cannot get from a batch it sends as ordinary requests.
An endpoint with `replicas` (several servers of one model) spreads its calls over them by least
outstanding requests, each replica with its own concurrency and token limits, and moves a call to another
replica when its server fails (examiner.llm.replicas, `_failover`); the cache key does not name the
replica, and the ledger's `replica` field names the one that answered. Batch mode uses base_url only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, overload

import httpx
import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

from examiner.core.config import EndpointSpec, Settings
from examiner.core.errors import BudgetExhausted, ConfigError
from examiner.llm.batch import BatchBook, BatchCollector, BatchMiss
from examiner.llm.budget import Budget, CompletionBounds
from examiner.llm.cache import ResponseCache, cache_key, response_cache_path
from examiner.llm.ledger import (CANCELLED, STARTED, UNKNOWN, Ledger, Usage, answered, in_flight,
                                 spent_usd as ledger_spent_usd, tokens_of)
from examiner.llm.replicas import Replica, choose
from examiner.llm.providers import ServerPool
from examiner.llm.structured import parse_structured, response_format, schema_instruction
from examiner.core.tokens import count_message_tokens, count_tokens
from examiner.core import rundir
from examiner.core.jsonl import read_jsonl
from examiner.core.redact import redact_text
from examiner.llm.reply_language import with_language
from examiner.llm.types import M, Attempt, CallContext, CallResult, GenerationConfig, TokenLogprob, Unparseable

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0

_LEDGER_STAGE: ContextVar[str | None] = ContextVar("examiner_ledger_stage", default=None)


@contextmanager
def ledger_stage(stage: str) -> Iterator[None]:
    """Record every call made inside this block (and in the tasks it starts) under `stage` in the ledger.

    Why: a method may call an existing role or judge object for a purpose of its own (the exam's judge
    self-check re-judges answers through the run's judge) and its cost must show apart in `examiner cost
    --by stage`. Only the ledger's `stage` changes: the request (its `X-Examiner-Stage` header included)
    is the one the role would send, so the endpoint answers it as it answers the role."""
    token = _LEDGER_STAGE.set(stage)
    try:
        yield
    finally:
        _LEDGER_STAGE.reset(token)


MAX_REPAIRS = 2
"""Re-asks of a structured reply that did not parse (a reply cut at max_tokens among them) before a call fails."""


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


def _chat_completion(raw: Any) -> Any | None:
    """The parsed chat completion of a raw 2xx reply, or None when the body is not one."""
    try:
        completion = raw.parse()
    except ValueError:  # a body announced as JSON that does not parse
        return None
    return completion if isinstance(getattr(completion, "choices", None), list) else None


def _foreign_reply(ep: "_Endpoint", raw: Any) -> str:
    """What an endpoint sent instead of a chat completion: status, content type and the body's start."""
    content_type = raw.headers.get("content-type") or "no content type"
    body = " ".join(raw.http_response.text.split())[:60]
    return (f"endpoint {ep.name} ({ep.base_url}) answered HTTP {raw.status_code} with {content_type}, not a "
            f"chat completion in JSON (body starts {body!r}); is base_url the root of an OpenAI-compatible "
            "API (e.g. http://host:8000/v1)?")


@dataclass
class Totals(Usage):
    """Running figures for live progress displays."""

    unparseable: int = 0
    failed: int = 0


@dataclass(frozen=True)
class _Call:
    """One request's role, context and ledger fields, as the request helpers pass them along."""

    role: str
    context: CallContext
    record: dict[str, Any]
    """The ledger fields of the call (role, stage, round, unit_ids, item_id, call_id, repair)."""

    def headers(self) -> dict[str, str]:
        """Request metadata: role, stage and the hints (with the round) as JSON; never the prompt.

        A re-ask carries `repair: k`, saying that its last k (reply, correction) turn pairs are failed
        attempts, so a deterministic test backend can answer what the first request asked, as a greedy
        model that is not thrown by its own bad reply would."""
        headers = {"X-Examiner-Role": self.role, "X-Examiner-Stage": self.context.stage or "-"}
        hints = dict(self.context.hints)
        if self.context.round:
            hints.setdefault("round", self.context.round)
        if self.record.get("repair"):
            hints["repair"] = self.record["repair"]
        if hints:
            headers["X-Examiner-Hints"] = json.dumps(hints, sort_keys=True, ensure_ascii=True)
        return headers


class _Endpoint:
    """Replicas (clients and limits) and structured-output mode of one named endpoint (created inside the
    event loop). `base_url` is the first replica's: the one batch mode and managed servers use."""

    def __init__(self, name: str, spec: EndpointSpec, base_urls: Sequence[str]) -> None:
        self.name = name
        self.spec = spec
        self.replicas = [Replica(url, spec) for url in base_urls]
        self.base_url = self.replicas[0].base_url
        self.client: AsyncOpenAI = self.replicas[0].client
        self.structured_mode = spec.structured_output

    @property
    def identity(self) -> str:
        """What the cache keys on: the URL of a configured endpoint, or, for a server examiner starts
        itself, its provider and options (its port changes from run to run, its replies do not)."""
        if self.spec.provider == "openai":  # without credentials: a changed password keeps the cache
            return redact_text(self.base_url)
        return f"{self.spec.provider}:{sorted(self.spec.options.items())!r}"


class Gateway:
    """Async model gateway shared by every agent of a run. Use as `async with Gateway(...) as gw`."""

    def __init__(
        self,
        settings: Settings,
        run_dir: str | Path | None = None,
        *,
        cache: bool | None = None,
        budget_usd: float | None = None,
        max_repairs: int = MAX_REPAIRS,
        run_id: str = "",
        notes: Callable[[str], None] | None = None,
    ) -> None:
        """`budget_usd` (default: the settings') caps the run's spending; a resumed run counts what its
        earlier processes spent against that cap by calling `resume_spending` first. `notes` shows
        progress lines of provider batches (default: logged at INFO)."""
        self.settings = settings
        self.run_dir = Path(run_dir) if run_dir else None
        use_cache = settings.cache if cache is None else cache
        cache_path = response_cache_path(settings, self.run_dir)
        self.cache = ResponseCache(cache_path) if (use_cache and cache_path is not None) else None
        self.ledger = Ledger(self.run_dir / rundir.LEDGER if self.run_dir else None)
        limit = budget_usd if budget_usd is not None else settings.budget_usd
        if limit is not None and limit < 0:
            raise ConfigError(f"budget must be zero or more dollars, got {limit}")
        self.budget = Budget(limit)
        self.bounds = CompletionBounds()
        """Completion tokens a call reserves, learned per (role, stage) from the run's finished calls."""
        self.max_repairs = max_repairs
        self.run_id = run_id
        self.totals = Totals()
        self.language = ""
        """Language code of the run's corpus (set by the exam): when not English, every call gets the
        one-line language instruction of examiner.llm.reply_language in its system message."""
        self._servers = ServerPool()
        self._endpoints: dict[str, _Endpoint] = {}
        self.notes = notes or log.info
        self._batch_book: BatchBook | None = None
        self._collectors: dict[str, BatchCollector] = {}
        self._batch_orphans: dict[str, dict[str, Any]] = {}
        """Cache key -> the `started` record a killed process wrote for a batch call (see `_adopt`)."""
        self._counted_in_flight: dict[str, float] = {}
        """Call id -> worst case that `resume_spending` counted for a call in flight at a kill."""

    async def __aenter__(self) -> "Gateway":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close HTTP clients, stop managed servers, flush the ledger and cache. Batches still running
        go on at the provider; a resumed run collects them."""
        for collector in self._collectors.values():
            await collector.aclose()
        self._collectors.clear()
        for endpoint in self._endpoints.values():
            for replica in endpoint.replicas:
                await replica.client.close()
        self._endpoints.clear()
        self._servers.stop_all()
        self.ledger.close()
        if self.cache is not None:
            self.cache.close()

    def resume_spending(self) -> int:
        """Before a resumed run's first call: settle the ledger's calls in flight at a kill, then count
        the run's spending against the budget and learn its completion bounds from its finished calls.
        Returns how many calls were reconciled.

        A `started` call whose reply is in the cache was answered (and billed) before the kill: it gets a
        `reconciled` outcome with its real tokens and cost. The others get an `unknown` outcome that keeps
        their worst case (a reply the server sent but the killed process never received cannot be known
        from here; a cached reply already named by an outcome record belongs to the same request paid by
        a later process, not to this one): they are possibly billed, shown apart, and no longer held
        against the budget, since the run has moved past them. A batch call still waiting at the provider
        is left in flight, held at its worst case: the resumed run collects its reply (`_adopt`)."""
        records = read_jsonl(self.ledger.path).rows if self.ledger.path is not None else []
        known_ids = {r.get("request_id") for r in records if r.get("request_id")}
        reconciled = 0
        for started in in_flight(records):
            if started.get("batch") and started.get("cache_key"):
                continue
            payload = self.cache.get(started["cache_key"]) if self.cache is not None and started.get("cache_key") else None
            if payload is None or payload.get("request_id") in known_ids:
                unknown = {k: v for k, v in started.items() if k not in ("outcome", "cache_key", "ts")}
                unknown.update(ts=time.time(), cost_usd=0.0, outcome=UNKNOWN)
                self.ledger.append(unknown)
                records.append(unknown)
                continue
            spec = self.settings.endpoints.get(str(started.get("endpoint")))
            # An endpoint no longer configured has no prices here: its worst case keeps the budget safe.
            batch = bool(payload.get("batch"))
            price = _price(spec, payload, batch) if spec else float(started.get("worst_case_usd", 0.0))
            outcome = {k: v for k, v in started.items() if k not in ("outcome", "worst_case_usd", "cache_key")}
            outcome.update(ts=time.time(), request_id=payload["request_id"], **tokens_of(payload),
                           usage_source=payload["usage_source"], attempts=payload["attempts"], cache_hit=False,
                           batch=batch, cost_usd=price, finish_reason=payload["finish_reason"], outcome="reconciled")
            self.ledger.append(outcome)
            records.append(outcome)
            known_ids.add(payload["request_id"])
            reconciled += 1
        self.budget.spent_usd = ledger_spent_usd(records)
        for record in answered(records):
            if not record.get("cache_hit"):
                self.bounds.observe(_bound_key(record), int(record.get("completion_tokens") or 0))
        self._counted_in_flight = {str(r.get("call_id")): float(r.get("worst_case_usd", 0.0)) for r in in_flight(records)}
        return reconciled

    # ------------------------------------------------------------------ resolution
    def resolve(self, role: str, endpoint: str | None = None) -> tuple[str, EndpointSpec]:
        """The (endpoint name, spec) a call for `role` goes to."""
        if endpoint is not None:
            return endpoint, self.settings.endpoint(endpoint)
        return self.settings.endpoint_for(role)

    async def _endpoint(self, name: str, spec: EndpointSpec) -> _Endpoint:
        """The endpoint's client, created on first use. A managed server is started in a worker thread
        (it blocks for seconds); the HTTP client itself is made here, in the event loop's thread."""
        if name not in self._endpoints:
            base_url = spec.base_url if spec.provider == "openai" else await asyncio.to_thread(self._servers.base_url, spec)
            if name not in self._endpoints:  # another task may have finished first
                self._endpoints[name] = _Endpoint(name, spec, [base_url or "", *spec.replicas])
        return self._endpoints[name]

    async def ensure_started(self, role: str, endpoint: str | None = None) -> str:
        """Start (if needed) the server behind a role's endpoint; returns its base URL."""
        name, spec = self.resolve(role, endpoint)
        return (await self._endpoint(name, spec)).base_url

    async def register_oracle(self, endpoint: str, gold: Mapping[str, Any]) -> None:
        """Hand gold labels to a simulated endpoint (its POST /sim/oracle route), so simulated judges have
        an accuracy to aim for; real endpoints have no oracle and are left alone."""
        spec = self.settings.endpoints.get(endpoint)
        if spec is None or spec.provider != "simulated" or not gold:
            return
        base_url = (await self._endpoint(endpoint, spec)).base_url
        async with httpx.AsyncClient(timeout=30) as client:
            reply = await client.post(base_url.removesuffix("/v1") + "/sim/oracle", json={"items": dict(gold)})
            reply.raise_for_status()

    # ------------------------------------------------------------------ public call
    @overload
    async def chat(
        self,
        role: str,
        messages: list[dict[str, str]],
        config: GenerationConfig = ...,
        context: CallContext = ...,
        *,
        schema: None = None,
        response_schema: type[BaseModel] | None = None,
        endpoint: str | None = None,
    ) -> CallResult[str]: ...

    @overload
    async def chat(
        self,
        role: str,
        messages: list[dict[str, str]],
        config: GenerationConfig = ...,
        context: CallContext = ...,
        *,
        schema: type[M],
        response_schema: type[BaseModel] | None = None,
        endpoint: str | None = None,
    ) -> CallResult[M]: ...

    async def chat(
        self,
        role: str,
        messages: list[dict[str, str]],
        config: GenerationConfig = GenerationConfig(),
        context: CallContext = CallContext(),
        *,
        schema: type[BaseModel] | None = None,
        response_schema: type[BaseModel] | None = None,
        endpoint: str | None = None,
    ) -> CallResult[Any]:
        """One logical call of `role` (which picks the endpoint unless `endpoint` names one).

        `config` says how to generate, `context` why the call is made (ledger and request metadata).
        Without `schema` the result's value is the text; with it, the validated object or Unparseable.
        `response_schema` (default: `schema`) is what the endpoint is asked to follow, e.g. a stricter
        variant whose enums a grammar can enforce while parsing stays lenient.

        Raises BudgetExhausted when the budget could be exceeded, ModelCallError when every attempt failed.
        """
        name, spec = self.resolve(role, endpoint)
        ep = self._endpoints.get(name) or await self._endpoint(name, spec)
        params = self._params(spec, config)
        record = {
            "role": role,
            "stage": _LEDGER_STAGE.get() or context.stage,
            "round": context.round,
            "unit_ids": list(context.unit_ids),
            "item_id": context.item_id,
            "call_id": uuid.uuid4().hex[:12],
        }
        call = _Call(role, context, record)
        conversation = with_language(list(messages), self.language)
        requested = response_schema or schema
        if requested is not None and ep.structured_mode in ("json_object", "text"):
            conversation = self._with_schema_hint(conversation, requested)
        result = await self._request(ep, conversation, params, config.n, requested, call)
        if schema is None:
            return result
        parsed, error = parse_structured(result.text, schema, truncated=result.finish_reason == "length")
        repairs = 0
        while parsed is None and repairs < self.max_repairs and result.text is not None:
            repairs += 1
            conversation = conversation + [
                {"role": "assistant", "content": result.text},
                {
                    "role": "user",
                    "content": f"That reply could not be used: {error}. Reply again with the JSON object only.",
                },
            ]
            result = await self._request(ep, conversation, params, config.n, requested,
                                         _Call(role, context, dict(record, repair=repairs)))
            parsed, error = parse_structured(result.text, schema, truncated=result.finish_reason == "length")
        if parsed is None:
            self.totals.unparseable += 1
            result.parsed = Unparseable(raw=result.text, error=error)
        else:
            result.parsed = parsed
        return result

    @staticmethod
    def _params(spec: EndpointSpec, config: GenerationConfig) -> dict[str, Any]:
        """The request body's generation fields (n is added per request), endpoint defaults filled in."""
        params: dict[str, Any] = {
            "max_tokens": config.max_tokens,
            "temperature": spec.temperature if config.temperature is None else config.temperature,
        }
        seed = spec.seed if config.seed is None else config.seed
        if seed is not None:
            params["seed"] = seed
        if config.logprobs:
            params["logprobs"] = True
            if config.top_logprobs:
                params["top_logprobs"] = config.top_logprobs
        if config.stop:
            params["stop"] = list(config.stop)
        return params

    @staticmethod
    def _with_schema_hint(messages: list[dict[str, str]], schema: type[BaseModel]) -> list[dict[str, str]]:
        hinted = [dict(m) for m in messages]
        hinted[-1]["content"] = f"{hinted[-1]['content']}\n\n{schema_instruction(schema)}"
        return hinted

    # ------------------------------------------------------------------ one request (maybe cached)
    async def _request(
        self,
        ep: _Endpoint,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        n: int,
        schema: type[BaseModel] | None,
        call: "_Call",
    ) -> CallResult[Any]:
        fmt = response_format(schema, ep.structured_mode) if schema is not None else None
        request = dict(params, n=n)
        if fmt is not None:
            request["response_format"] = fmt

        # A batch call needs the key even without a cache: it is the call's custom_id in the batch.
        key = cache_key(endpoint=ep.identity, model=ep.spec.model, messages=messages, request=request) if (
            self.cache is not None or ep.spec.batch
        ) else None

        async def fetch() -> dict[str, Any]:
            return await self._send(ep, messages, request, call, key)

        started = time.perf_counter()
        if self.cache is not None and key is not None:  # key is None only without a cache
            payload, hit = await self.cache.get_or_fetch(key, fetch)
        else:
            payload, hit = await fetch(), False
        result = self._result(ep, payload, hit, time.perf_counter() - started)
        self._record(ep, result, call.record, batch=bool(payload.get("batch")) and not hit)
        return result

    async def _send(
        self, ep: _Endpoint, messages: list[dict[str, str]], request: dict[str, Any], call: _Call,
        key: str | None,
    ) -> dict[str, Any]:
        """Budget, rate limits, the write-ahead `started` record and retried HTTP for one request;
        returns a cacheable payload. A failed request gets its `failed` outcome here, a cancelled one (a
        stop signal, or a panel that no longer needs it) its `cancelled` outcome with its worst case: the
        request may have reached the server, but no reply came, so nothing of it is known or counted."""
        spec = ep.spec
        n = int(request.get("n", 1))
        prompt_estimate = count_message_tokens(messages)
        # At the standard price even in batch mode: a request a batch does not answer is sent as usual.
        worst_case = spec.worst_case_usd(prompt_estimate, request["max_tokens"] * n)
        # What the budget holds: the prompt and the completion bound learned for the role and stage.
        bound_key = _bound_key(call.record)
        reserved = spec.worst_case_usd(prompt_estimate, self.bounds.bound(bound_key, request["max_tokens"]) * n)
        ticket = await self.budget.reserve(reserved, worst_case) if self.budget.limit_usd is not None else None
        batched = key is not None and self._batched(spec, n, call)
        announced = False
        try:
            if not (batched and self._adopt(key, call)):
                announced = True
                self.ledger.append(dict(call.record, ts=time.time(), run_id=self.run_id, endpoint=ep.name,
                                        model=spec.model, outcome=STARTED, worst_case_usd=worst_case,
                                        reserved_usd=reserved, cache_key=key,
                                        **({"batch": True} if batched else {})))
            if n > 1 and not spec.supports_n:
                payload = await self._fan_out(ep, messages, request, call)
            elif batched:
                assert key is not None
                payload = await self._batch_reply(ep, messages, request, call, key)
            else:
                payload = await self._failover(ep, messages, request, call)
        except BaseException as exc:
            if isinstance(exc, (ModelCallError, NotAnOpenAIEndpoint)):
                self.ledger.append(dict(call.record, endpoint=ep.name, model=spec.model, outcome="failed",
                                        attempts=[a.__dict__ for a in exc.attempts], cost_usd=0.0))
            elif isinstance(exc, asyncio.CancelledError) and announced:
                self.ledger.append(dict(call.record, ts=time.time(), endpoint=ep.name, model=spec.model,
                                        outcome=CANCELLED, worst_case_usd=worst_case, cost_usd=0.0))
            if ticket is not None:
                self.budget.settle(ticket, 0.0)
            raise
        self.bounds.observe(bound_key, -(-int(payload.get("completion_tokens") or 0) // n))
        if ticket is not None:
            self.budget.settle(ticket, _price(spec, payload, bool(payload.get("batch"))))
        return payload

    # ------------------------------------------------------------------ batch mode
    @staticmethod
    def _batched(spec: EndpointSpec, n: int, call: _Call) -> bool:
        """Whether a request goes to a provider batch. Re-asks after an unusable reply do not: they are
        few, and a second batch round trip (up to the completion window) for them would hold up the
        whole step; nor do n > 1 requests to an endpoint that returns one choice per request."""
        return spec.batch and not call.record.get("repair") and (n == 1 or spec.supports_n)

    def _batches(self) -> BatchBook:
        """The run's submitted batches, and the batch calls a killed process left in flight, read once."""
        if self._batch_book is None:
            self._batch_book = BatchBook(rundir.RunDir(self.run_dir) if self.run_dir else None)
            records = read_jsonl(self.ledger.path).rows if self.ledger.path is not None else []
            self._batch_orphans = {str(r["cache_key"]): r for r in in_flight(records)
                                   if r.get("batch") and r.get("cache_key")}
        return self._batch_book

    def _adopt(self, key: str, call: _Call) -> bool:
        """A resumed batch call takes the identity of the `started` record its killed process wrote for
        the same request (which waits in the same saved batch), so the ledger shows one request with
        one outcome, and the worst case the resume counted for it gives way to its real cost."""
        self._batches()
        orphan = self._batch_orphans.pop(key, None)
        if orphan is None:
            return False
        call.record["call_id"] = orphan["call_id"]
        self.budget.spent_usd -= self._counted_in_flight.pop(str(orphan["call_id"]), 0.0)
        return True

    async def _batch_reply(
        self, ep: _Endpoint, messages: list[dict[str, str]], request: dict[str, Any], call: _Call, key: str
    ) -> dict[str, Any]:
        """The request's reply from a provider batch as a cacheable payload marked `batch`; a request the
        batch does not answer is sent as an ordinary request."""
        if ep.name not in self._collectors:
            self._collectors[ep.name] = BatchCollector(ep.name, ep.spec, ep.client, self._batches(), self.notes)
        began = time.perf_counter()
        # Only the simulated backend reads request metadata from a batch line; providers get the standard line.
        headers = call.headers() if ep.spec.provider == "simulated" else None
        try:
            reply = await self._collectors[ep.name].answer(key, dict(request, model=ep.spec.model, messages=messages),
                                                           headers)
            completion = ChatCompletion.model_validate(reply)
        except (BatchMiss, ValidationError) as miss:
            log.info("endpoint %s: %s; sending the request on its own", ep.name, str(miss).splitlines()[0][:200])
            return await self._failover(ep, messages, request, call)
        attempt = Attempt("ok", time.perf_counter() - began, detail="batch")
        return dict(self._payload(completion, messages, [attempt], None), batch=True)

    async def _fan_out(
        self, ep: _Endpoint, messages: list[dict[str, str]], request: dict[str, Any], call: _Call
    ) -> dict[str, Any]:
        """n samples from an endpoint that returns one choice per request: n requests, distinct seeds."""
        base_seed = int(request.get("seed") or 0)
        singles = [dict(request, n=1, seed=base_seed + i) for i in range(int(request["n"]))]
        parts = await asyncio.gather(*(self._failover(ep, messages, s, call) for s in singles))
        merged = dict(parts[0])
        merged["texts"] = [p["texts"][0] if p["texts"] else "" for p in parts]
        merged.update({name: sum(tokens_of(p)[name] for p in parts) for name in tokens_of(merged)})
        merged["attempts"] = [a for p in parts for a in p["attempts"]]
        return merged

    async def _failover(
        self, ep: _Endpoint, messages: list[dict[str, str]], request: dict[str, Any], call: _Call
    ) -> dict[str, Any]:
        """One request with its attempts on the replica `choose` picks (under that replica's token
        window); when they fail for want of a working server (not a request the server refused), the
        request goes to another replica not yet tried, until one answers or none is left. A payload from
        a replicated endpoint names the replica that answered and carries every attempt made."""
        earlier: list[Attempt] = []
        tried: list[Replica] = []
        while (replica := choose(ep.replicas, tried)) is not None:
            tried.append(replica)
            replica.outstanding += 1
            try:
                if replica.tpm is not None:
                    await replica.tpm.acquire(count_message_tokens(messages) + request["max_tokens"] * int(request.get("n", 1)))
                payload = await self._attempts(ep, replica, messages, request, call)
            except ModelCallError as exc:
                if len(ep.replicas) > 1:
                    exc.attempts[:] = [Attempt(a.status, a.latency_s, a.wait_s, f"{replica.base_url}: {a.detail}")
                                       for a in exc.attempts]
                earlier += exc.attempts
                if not _server_failure(exc.attempts):
                    raise ModelCallError(str(exc), earlier) from None
                if len(tried) == len(ep.replicas):
                    self.totals.failed += 1
                    message = str(exc) if len(tried) == 1 else \
                        f"{ep.name}: no usable reply from any of its {len(tried)} replicas ({len(earlier)} attempts)"
                    raise ModelCallError(message, earlier) from None
                log.warning("endpoint %s: replica %s failed (%s); the call goes to another replica",
                            ep.name, replica.base_url, exc.attempts[-1].status)
                continue
            finally:
                replica.outstanding -= 1
            if len(ep.replicas) > 1:
                payload = dict(payload, replica=replica.base_url, attempts=[a.__dict__ for a in earlier] + payload["attempts"])
            return payload
        raise AssertionError("an endpoint has at least one replica")

    async def _attempts(
        self, ep: _Endpoint, replica: Replica, messages: list[dict[str, str]], request: dict[str, Any], call: _Call
    ) -> dict[str, Any]:
        """Up to max_attempts HTTP attempts on one replica, with back-off; a replica marked down meanwhile
        (by this call's failures or others') is left after the failed attempt when another is up."""
        spec = ep.spec
        attempts: list[Attempt] = []
        headers = call.headers()
        for number in range(1, spec.max_attempts + 1):
            began = time.perf_counter()
            wait: float | None = None
            try:
                async with replica.slots:
                    replica.sent += 1
                    raw = await replica.client.chat.completions.with_raw_response.create(
                        model=spec.model, messages=messages, extra_headers=headers, **request
                    )
                completion = _chat_completion(raw)
                latency = time.perf_counter() - began
                if completion is None:
                    attempts.append(Attempt("foreign", latency, detail=_foreign_reply(ep, raw)))
                    wait = self._backoff(spec, number)
                elif not completion.choices:
                    attempts.append(Attempt("empty", latency, detail="no choices in reply"))
                    wait = self._backoff(spec, number)
                else:
                    attempts.append(Attempt("ok", latency))
                    replica.succeeded()
                    return self._payload(completion, messages, attempts, raw.headers.get("x-request-id"))
            except openai.RateLimitError as exc:
                wait = self._retry_after(exc) or self._backoff(spec, number)
                attempts.append(Attempt("429", time.perf_counter() - began, detail=_short(exc)))
            except openai.APITimeoutError as exc:
                attempts.append(Attempt("timeout", time.perf_counter() - began, detail=_short(exc)))
                wait = self._backoff(spec, number)
                replica.failed()
            except openai.APIConnectionError as exc:
                attempts.append(Attempt("connection", time.perf_counter() - began, detail=_short(exc)))
                wait = self._backoff(spec, number)
                replica.failed()
            except openai.APIStatusError as exc:
                attempts.append(Attempt(str(exc.status_code), time.perf_counter() - began, detail=_short(exc)))
                if exc.status_code >= 500:
                    wait = self._backoff(spec, number)
                    replica.failed()
                elif exc.status_code in (400, 422) and "response_format" in request and ep.structured_mode != "text":
                    ep.structured_mode = "json_object" if ep.structured_mode.startswith("json_") and ep.structured_mode != "json_object" else "text"
                    log.warning("endpoint %s rejected response_format; falling back to %s", ep.name, ep.structured_mode)
                    request = {k: v for k, v in request.items() if k != "response_format"}
                    if ep.structured_mode == "json_object":
                        request["response_format"] = {"type": "json_object"}
                    wait = 0.0
                else:
                    raise ModelCallError(f"{ep.name}: HTTP {exc.status_code}: {_short(exc)}", attempts) from None
            if _server_failure(attempts) and not replica.up() and any(r.up() for r in ep.replicas):
                break  # this server is down and another is up: the call goes there now
            if number < spec.max_attempts and wait is not None:
                attempts[-1] = Attempt(attempts[-1].status, attempts[-1].latency_s, wait, attempts[-1].detail)
                await asyncio.sleep(wait)
        summary = ", ".join(a.status for a in attempts)
        if all(a.status == "foreign" for a in attempts):
            self.totals.failed += 1
            raise NotAnOpenAIEndpoint(attempts[-1].detail, attempts)
        raise ModelCallError(f"{ep.name}: no usable reply after {len(attempts)} attempts ({summary})", attempts)

    @staticmethod
    def _backoff(spec: EndpointSpec, number: int) -> float:
        return random.uniform(0, min(MAX_BACKOFF_S, spec.backoff_base_s * 2 ** (number - 1)))

    @staticmethod
    def _retry_after(exc: openai.APIStatusError) -> float | None:
        value = exc.response.headers.get("retry-after") if exc.response is not None else None
        try:
            return min(MAX_BACKOFF_S * 2, max(0.0, float(value))) if value is not None else None
        except ValueError:
            return None

    @staticmethod
    def _payload(completion: Any, messages: list[dict[str, str]], attempts: list[Attempt], header_id: str | None) -> dict[str, Any]:
        texts = [(choice.message.content or "") if choice.message else "" for choice in completion.choices]
        first = completion.choices[0]
        logprobs = None
        if getattr(first, "logprobs", None) is not None and first.logprobs.content:
            logprobs = [
                [item.token, item.logprob, {alt.token: alt.logprob for alt in (item.top_logprobs or [])}]
                for item in first.logprobs.content
            ]
        usage = completion.usage
        if usage is not None and usage.prompt_tokens is not None:
            tokens, source = _reported_tokens(usage), "api"
        else:
            tokens = {"prompt_tokens": count_message_tokens(messages),
                      "completion_tokens": sum(count_tokens(t) for t in texts)}
            source = "tiktoken"
        return {
            "texts": texts,
            "logprobs": logprobs,
            "finish_reason": first.finish_reason,
            **tokens_of(tokens),
            "usage_source": source,
            "request_id": header_id or completion.id or uuid.uuid4().hex,
            "attempts": [a.__dict__ for a in attempts],
        }

    # ------------------------------------------------------------------ results and ledger
    def _result(self, ep: _Endpoint, payload: dict[str, Any], hit: bool, latency: float) -> CallResult[Any]:
        """The result of a payload, not yet priced: `_record` prices it."""
        texts = payload["texts"]
        text = texts[0] if texts else ""
        return CallResult(
            text=text,
            parsed=text,
            texts=texts,
            logprobs=[TokenLogprob(t, lp, top) for t, lp, top in payload["logprobs"]] if payload["logprobs"] else None,
            **tokens_of(payload),
            usage_source=payload["usage_source"],
            cache_hit=hit,
            attempts=[Attempt(**a) for a in payload["attempts"]] if not hit else [],
            request_id=payload["request_id"],
            endpoint=ep.name,
            replica="" if hit else payload.get("replica", ""),
            model=ep.spec.model,
            latency_s=latency,
            finish_reason=payload["finish_reason"],
        )

    def _record(self, ep: _Endpoint, result: CallResult[Any], context: dict[str, Any], *, batch: bool = False) -> None:
        """Price a result (a cache hit costs nothing; `batch`: answered through the provider's batch API,
        at the endpoint's batch rate), count it in the running totals and append its outcome record."""
        result.batch = batch
        result.cost_usd = 0.0 if result.cache_hit else _price(ep.spec, vars(result), batch)
        record = dict(
            context,
            ts=time.time(),
            run_id=self.run_id,
            endpoint=ep.name,
            **({"replica": result.replica} if result.replica else {}),
            model=ep.spec.model,
            request_id=result.request_id,
            **result.extra(),
            latency_s=round(result.latency_s, 6),
            attempts=[a.__dict__ for a in result.attempts],
            finish_reason=result.finish_reason,
            outcome="ok",
        )
        self.totals.add_record(record)
        self.ledger.append(record)


def _reported_tokens(usage: Any) -> dict[str, int]:
    """Token counts of an OpenAI `usage` object (openai.types.CompletionUsage): the totals, and the details
    that are parts of them where the endpoint reports them (prompt_tokens_details.cached_tokens and
    .cache_write_tokens, completion_tokens_details.reasoning_tokens); absent details count 0."""
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens or 0,
        "cached_tokens": getattr(prompt_details, "cached_tokens", None) or 0,
        "cache_write_tokens": getattr(prompt_details, "cache_write_tokens", None) or 0,
        "reasoning_tokens": getattr(completion_details, "reasoning_tokens", None) or 0,
    }


def _price(spec: EndpointSpec, usage: Mapping[str, Any], batch: bool = False) -> float:
    """Dollars of the token counts in `usage` (a payload, a result's fields) at the endpoint's prices. A
    payload cached before examiner read the usage details has none: its tokens get the plain prices."""
    tokens = tokens_of(dict(usage))
    return spec.cost_usd(tokens.pop("prompt_tokens"), tokens.pop("completion_tokens"), **tokens, batch=batch)


def _bound_key(record: Mapping[str, Any]) -> tuple[str, str]:
    """What a completion bound is learned for: a call's role and ledger stage."""
    return str(record.get("role") or ""), str(record.get("stage") or "")


def _server_failure(attempts: Sequence[Attempt]) -> bool:
    """Whether a request failed for want of a working server (its last attempt a connection error, a
    timeout, a 429, a 5xx or an unusable reply), not because the server refused the request itself (4xx):
    such a request may succeed on another replica."""
    status = attempts[-1].status if attempts else ""
    return not (status.isdigit() and 400 <= int(status) < 500 and status != "429")


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


__all__ = ["Gateway", "ModelCallError", "NotAnOpenAIEndpoint", "BudgetExhausted", "Totals", "ledger_stage"]
