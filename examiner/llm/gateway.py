"""The one gateway to models. Nothing else in examiner talks to a model endpoint.

`Gateway` composes parts with one job each:
- transport (examiner.llm.transport): endpoints, their clients and replicas, retries and failover, the
  structured-output fallback, and the provider plugins (examiner.llm.providers: configured URLs, the local
  model and the simulator, the only one whose requests carry the `X-Examiner-*` metadata);
- accounting (examiner.llm.accounting): prices, the write-ahead ledger, the budget and the settling of
  calls a killed run left in flight;
- the response cache (examiner.llm.cache), shared in-flight by identical requests;
- batch mode (examiner.llm.batch): requests sent through a provider's Batch API, adopted on resume.

Every call goes: cache lookup -> budget reservation -> a provider batch (batch mode) or the transport, the
`started` ledger record written when the request leaves (it has its concurrency slot), a `lost` record for
each attempt that may have been billed though its reply is not used -> its outcome in the ledger (an
answer's usage checked first) -> structured-output parsing with up to `max_repairs` re-asks. Replies travel
as typed `ChatReply` objects (examiner.llm.reply). All traffic uses the `openai`
SDK's AsyncOpenAI client, so any OpenAI-compatible server works. The cache key does not name a replica.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, overload

from pydantic import BaseModel

from examiner.core import rundir
from examiner.core.config import EndpointSpec, Settings
from examiner.core.errors import BudgetExhausted, ConfigError
from examiner.llm.accounting import Accounting, Totals
from examiner.llm.batch import BatchLane, BatchMiss
from examiner.llm.budget import Budget, CompletionBounds
from examiner.llm.cache import ResponseCache, cache_key, response_cache_path
from examiner.llm.call import CallMeta, ledger_stage
from examiner.llm.ledger import Ledger
from examiner.llm.reply import ChatReply, Messages
from examiner.llm.reply_language import with_language
from examiner.llm.sending import Sending
from examiner.llm.providers import register_oracle
from examiner.llm.structured import parse_structured, response_format, schema_instruction
from examiner.llm.transport import ChatRequest, Endpoint, ModelCallError, NotAnOpenAIEndpoint, Transport
from examiner.llm.types import M, CallContext, CallResult, GenerationConfig, Unparseable

log = logging.getLogger(__name__)

OK_RECORD_WAIT_S = 0.5
"""How long a paid call waits for the response cache's writer before its `ok` ledger record, so that a kill
between the two cannot lose a reply the ledger calls paid: a commit takes milliseconds; only a cache another
process keeps locked takes longer, and then the run goes on."""

MAX_REPAIRS = 2
"""Re-asks of a structured reply that did not parse (a reply cut at max_tokens among them) before a call fails."""


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
        limit = budget_usd if budget_usd is not None else settings.budget_usd
        if limit is not None and limit < 0:
            raise ConfigError(f"budget must be zero or more dollars, got {limit}")
        self.accounting = Accounting(Ledger(self.run_dir / rundir.LEDGER if self.run_dir else None), Budget(limit),
                                     run_id)
        self.transport = Transport(on_failure=self.accounting.count_failure)
        self.batches = BatchLane(self.run_dir, self.accounting.records, notes or log.info)
        self.max_repairs = max_repairs
        self.cache_status: str | None = None
        """The response cache's trouble when the gateway closed (ResponseCache.status), None without any."""
        self.language = ""
        """Language code of the run's corpus (set by the exam): when not English, every call gets the
        one-line language instruction of examiner.llm.reply_language in its system message."""

    # The accounting's figures, where callers have always read them.
    @property
    def ledger(self) -> Ledger:
        return self.accounting.ledger

    @property
    def budget(self) -> Budget:
        return self.accounting.budget

    @property
    def bounds(self) -> CompletionBounds:
        return self.accounting.bounds

    @property
    def totals(self) -> Totals:
        return self.accounting.totals

    @property
    def run_id(self) -> str:
        return self.accounting.run_id

    @property
    def notes(self) -> Callable[[str], None]:
        """Where progress lines of provider batches go."""
        return self.batches.notes

    @notes.setter
    def notes(self, show: Callable[[str], None]) -> None:
        self.batches.notes = show

    async def __aenter__(self) -> "Gateway":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close HTTP clients, stop managed servers, flush the ledger and cache. Batches still running
        go on at the provider; a resumed run collects them. Replies the response cache could not store
        (another process held it locked) are said in one warning line and kept in `cache_status`: they
        are in memory only, so a later run pays for them again."""
        await self.batches.aclose()
        await self.transport.aclose()
        self.accounting.ledger.close()
        if self.cache is not None:
            self.cache.close()
            self.cache_status = self.cache.status()
            if self.cache_status:
                log.warning("%s; a later run pays for those again", self.cache_status)

    def resume_spending(self) -> int:
        """Before a resumed run's first call: settle the ledger's calls in flight at a kill, then count the
        run's spending against the budget (examiner.llm.accounting.Accounting.resume). Returns how many
        calls were reconciled from the response cache."""
        cache = self.cache
        return self.accounting.resume(self.settings.endpoints, cache.reply if cache is not None else lambda _key: None)

    # ------------------------------------------------------------------ resolution
    def resolve(self, role: str, endpoint: str | None = None) -> tuple[str, EndpointSpec]:
        """The (endpoint name, spec) a call for `role` goes to."""
        if endpoint is not None:
            return endpoint, self.settings.endpoint(endpoint)
        return self.settings.endpoint_for(role)

    async def ensure_started(self, role: str, endpoint: str | None = None) -> str:
        """Start (if needed) the server behind a role's endpoint; returns its base URL."""
        name, spec = self.resolve(role, endpoint)
        return (await self.transport.endpoint(name, spec)).base_url

    async def register_oracle(self, endpoint: str, gold: Mapping[str, Any]) -> None:
        """Hand gold labels to a simulated endpoint, so simulated judges have an accuracy to aim for; real
        endpoints have no oracle and are left alone."""
        spec = self.settings.endpoints.get(endpoint)
        if spec is None or spec.provider != "simulated" or not gold:
            return
        await register_oracle((await self.transport.endpoint(endpoint, spec)).base_url, gold)

    # ------------------------------------------------------------------ public call
    @overload
    async def chat(
        self,
        role: str,
        messages: Messages,
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
        messages: Messages,
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
        messages: Messages,
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
        ep = self.transport.known(name) or await self.transport.endpoint(name, spec)
        params = _params(spec, config)
        meta = CallMeta.for_call(role, context)
        conversation = with_language(list(messages), self.language)
        requested = response_schema or schema
        if requested is not None and ep.structured_mode in ("json_object", "text"):
            conversation = _with_schema_hint(conversation, requested)
        result, meta = await self._request(ep, conversation, params, config.n, requested, meta)
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
            result, _ = await self._request(ep, conversation, params, config.n, requested, meta.repaired(repairs))
            parsed, error = parse_structured(result.text, schema, truncated=result.finish_reason == "length")
        out: CallResult[Any] = result
        if parsed is None:
            self.accounting.count_unparseable()
            out.parsed = Unparseable(raw=result.text, error=error)
        else:
            out.parsed = parsed
        return out

    # ------------------------------------------------------------------ one request (maybe cached)
    async def _request(self, ep: Endpoint, messages: Messages, params: dict[str, Any], n: int,
                       schema: type[BaseModel] | None, meta: CallMeta) -> tuple[CallResult[str], CallMeta]:
        """One request through the cache: its result, recorded, and the metadata it was sent under (a
        resumed batch call takes over the call id of the request its killed process started)."""
        mode = ep.structured_mode
        fmt = response_format(schema, mode) if schema is not None else None
        body = dict(params, n=n)
        if fmt is not None:
            body["response_format"] = fmt
        request = ChatRequest(messages, body, mode)

        # A batch call needs the key even without a cache: it is the call's custom_id in the batch.
        key = cache_key(endpoint=ep.identity, model=ep.spec.model, messages=messages, request=body) if (
            self.cache is not None or ep.spec.batch
        ) else None
        sent_as = meta

        async def fetch() -> ChatReply:
            nonlocal sent_as
            reply, sent_as = await self._send(ep, request, meta, key)
            return reply

        started = time.perf_counter()
        if self.cache is not None and key is not None:  # key is None only without a cache
            reply, hit = await self.cache.get_or_fetch(key, fetch)
            if not hit:
                # The reply is in the cache's file before its `ok` record is in the ledger. A kill between the
                # two leaves the call in flight: a resume reconciles it from the cache, or (reply lost with the
                # process) marks it unknown, possibly billed. Never an `ok` call whose reply a resume cannot
                # find and pays for again. The wait is bounded: a shared cache another process keeps locked
                # must not stall the run (its write goes on in the writer thread, and the cache warns).
                await asyncio.to_thread(self.cache.flush, OK_RECORD_WAIT_S)
        else:
            reply, hit = await fetch(), False
        result = reply.result(endpoint=ep.name, model=ep.spec.model, hit=hit, latency_s=time.perf_counter() - started)
        self.accounting.record(ep.spec, result, sent_as, batch=reply.batch and not hit,
                               reported_usage=None if hit else reply.reported_usage, reply_model=reply.model)
        return result, sent_as

    async def _send(self, ep: Endpoint, request: ChatRequest, meta: CallMeta,
                    key: str | None) -> tuple[ChatReply, CallMeta]:
        """Budget, then the request through a provider batch or the transport, whose attempts write the
        `started` record when the first leaves and a `lost` record for each that may have been billed
        though its reply is not used (examiner.llm.sending); then its outcome: answered (usage checked),
        failed, or cancelled (a stop signal, or a panel that no longer needs it: with an attempt out it may
        have reached the server, and keeps its worst case)."""
        spec = ep.spec
        held = await self.accounting.reserve(spec, meta, request)
        batched = key is not None and BatchLane.takes(spec, request, meta)
        sending = self.accounting.sending(held, ep.name, spec, meta, key, batched)
        try:
            adopted = self.batches.adopt(key) if batched and key is not None else None
            if adopted is not None:
                meta = meta.adopting(adopted)
                self.accounting.adopt(adopted)
                sending.announced = True  # its `started` record is the killed process's
            elif batched:
                sending.announce()
            reply = await self._batch_reply(ep, request, meta, key, sending) if batched and key is not None \
                else await self.transport.send(ep, request, meta, sending)
        except (ModelCallError, NotAnOpenAIEndpoint) as exc:
            self.accounting.failed(sending, exc.attempts)
            raise
        except BudgetExhausted:
            if sending.announced:  # stopped between two attempts, its lost ones recorded
                self.accounting.failed(sending, [], "budget")
            else:
                self.accounting.abandoned(sending)
            raise
        except asyncio.CancelledError:
            if sending.announced:
                self.accounting.cancelled(sending)
            else:
                self.accounting.abandoned(sending)
            raise
        except BaseException:
            self.accounting.abandoned(sending)
            raise
        reply = self.accounting.checked(sending, reply)
        self.accounting.answered(sending, meta, reply)
        return reply, meta

    async def _batch_reply(self, ep: Endpoint, request: ChatRequest, meta: CallMeta, key: str,
                           sending: Sending) -> ChatReply:
        """The request's reply from a provider batch; a request the batch does not answer is sent as an
        ordinary request."""
        try:
            return await self.batches.reply(ep, key, request, ep.provider.request_headers(meta))
        except BatchMiss as miss:
            log.info("endpoint %s: %s; sending the request on its own", ep.name, str(miss).splitlines()[0][:200])
            return await self.transport.send(ep, request, meta, sending)


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


def _with_schema_hint(messages: Messages, schema: type[BaseModel]) -> Messages:
    hinted = [dict(m) for m in messages]
    hinted[-1]["content"] = f"{hinted[-1]['content']}\n\n{schema_instruction(schema)}"
    return hinted


__all__ = ["Gateway", "ModelCallError", "NotAnOpenAIEndpoint", "BudgetExhausted", "MAX_REPAIRS",
           "Totals", "ledger_stage"]
