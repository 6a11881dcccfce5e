"""Accounting: what calls cost and what they may cost. Prices, the write-ahead ledger, the budget and the
settling of calls a killed process left in flight.

For each request sent: a budget reservation (`reserve`: its prompt plus the completion bound learned for
its role and stage, at the endpoint's dearest prices; its worst case with max_tokens), a `Sending`
(examiner.llm.sending: the `started` record when an attempt leaves, a `lost` record and a charge at its worst
case for each attempt that may have been billed though its reply is not used), then one outcome:
`answered` (the reservation gives way to the real cost, priced by EndpointSpec.cost_usd from the reply's
usage, or its worst case when that usage is implausible: examiner.llm.usage_check), `failed` or
`cancelled` (held at its worst case when an attempt was out). Every result, cache hits included, gets its
`ok` record from `record`. A resumed run first calls `resume`, which settles the calls in
flight at a kill (examiner.llm.ledger says how) and counts the run's spending against the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
import logging
from dataclasses import asdict, dataclass
from typing import Any

from examiner.core.config import EndpointSpec
from examiner.core.ledger_record import LedgerRecord
from examiner.core.tokens import count_message_tokens
from examiner.llm.budget import Budget, CompletionBounds
from examiner.llm.call import CallMeta
from examiner.llm.ledger import (CANCELLED, TOKEN_FIELDS, UNKNOWN, Ledger, Usage, answered, in_flight, read_ledger,
                                 spent_usd as ledger_spent_usd)
from examiner.llm.reply import ChatReply
from examiner.llm.sending import Reservation, Sending
from examiner.llm.transport import ChatRequest
from examiner.llm.types import Attempt, CallResult
from examiner.llm.usage_check import at_worst_case, implausible

log = logging.getLogger(__name__)

@dataclass
class Totals(Usage):
    """Running figures for live progress displays."""

    unparseable: int = 0
    failed: int = 0


def price(spec: EndpointSpec, counts: Mapping[str, Any], batch: bool = False) -> float:
    """Dollars of token counts (examiner.llm.ledger.TOKEN_FIELDS; absent ones 0, other fields ignored) at
    the endpoint's prices (`batch`: at its batch rate). A reply cached before examiner read the usage details
    has none: its tokens get the plain prices."""
    tokens = {name: int(counts.get(name) or 0) for name in TOKEN_FIELDS}
    return spec.cost_usd(tokens.pop("prompt_tokens"), tokens.pop("completion_tokens"), **tokens, batch=batch)


def _bound_key(record: LedgerRecord) -> tuple[str, str]:
    """What a completion bound is learned for, from a ledger record: its role and stage."""
    return record.role, str(record.stage)


class Accounting:
    """A gateway's ledger, budget, completion bounds and running totals."""

    def __init__(self, ledger: Ledger, budget: Budget, run_id: str = "") -> None:
        self.ledger = ledger
        self.budget = budget
        self.bounds = CompletionBounds()
        """Completion tokens a call reserves, learned per (role, stage) from the run's finished calls."""
        self.totals = Totals()
        self.run_id = run_id
        self._counted_in_flight: dict[str, float] = {}
        """Call id -> worst case that `resume` counted for a call in flight at a kill."""

    def records(self) -> list[LedgerRecord]:
        """The run's ledger records so far (none without a run directory)."""
        return read_ledger(self.ledger.path) if self.ledger.path is not None else []

    def count_failure(self) -> None:
        """A request that failed for good (for the running totals)."""
        self.totals.failed += 1

    def count_unparseable(self) -> None:
        """A structured call whose reply never validated (for the running totals)."""
        self.totals.unparseable += 1

    # ------------------------------------------------------------------ one request
    async def reserve(self, spec: EndpointSpec, meta: CallMeta, request: ChatRequest) -> Reservation:
        """Hold the request's expected cost, waiting while calls in flight may settle below what they hold;
        raises BudgetExhausted when it cannot fit. Batch calls are held at the standard price: a request a
        batch does not answer is sent as usual."""
        n = request.n
        prompt_estimate = count_message_tokens(request.messages)
        worst_case = spec.worst_case_usd(prompt_estimate, request.max_tokens * n)
        reserved = spec.worst_case_usd(prompt_estimate, self.bounds.bound(meta.bound_key, request.max_tokens) * n)
        ticket = await self.budget.reserve(reserved, worst_case) if self.budget.limit_usd is not None else None
        return Reservation(ticket, reserved, worst_case, n, request.max_tokens, prompt_estimate)

    def sending(self, held: Reservation, endpoint: str, spec: EndpointSpec, meta: CallMeta, key: str | None,
                batch: bool) -> Sending:
        """The request on its way: its `started` record (written when it leaves) and its lost attempts."""
        head = meta.ledger_record().then(run_id=self.run_id, endpoint=endpoint, model=spec.model)
        return Sending(held, self.ledger, self.budget, spec, head, key, batch)

    def adopt(self, call_id: str) -> None:
        """A resumed batch call took over the request `call_id` a killed process started: the worst case
        `resume` counted for it gives way to its real cost when it is answered."""
        self.budget.spent_usd -= self._counted_in_flight.pop(call_id, 0.0)

    def checked(self, sending: Sending, reply: ChatReply) -> ChatReply:
        """The reply, or, when its reported usage is implausible (examiner.llm.usage_check), the reply with
        its request's worst-case usage in place of it, said in one warning line."""
        held = sending.held
        why = implausible(reply, held.max_tokens * held.choices, sending.spec.context_tokens, held.prompt_tokens)
        if why is None:
            return reply
        log.warning("endpoint %s reported implausible usage (%s); the call is charged at its worst case",
                    sending.head.endpoint, why)
        return at_worst_case(reply, sending.spec, held.prompt_tokens, held.max_tokens * held.choices, why)

    def answered(self, sending: Sending, meta: CallMeta, reply: ChatReply) -> None:
        """Learn the completion bound from the reply and book its real cost in place of the reservation."""
        self.bounds.observe(meta.bound_key, -(-reply.completion_tokens // sending.held.choices))
        sending.release(price(sending.spec, reply.token_counts(), reply.batch))

    def failed(self, sending: Sending, attempts: Sequence[Attempt], why: str = "") -> None:
        """The `failed` outcome of a request whose every attempt failed (nothing billed beyond its lost
        attempts, recorded already), or that the budget stopped between two attempts (`why`)."""
        sending.announce()  # a request that never left still ends with an outcome of its own
        self.ledger.append(sending.head.then(outcome="failed", attempts=[asdict(a) for a in attempts], cost_usd=0.0,
                                             **({"stopped": why} if why else {})))
        sending.release(0.0)

    def cancelled(self, sending: Sending) -> None:
        """The `cancelled` outcome of a request examiner stopped before a reply came. With an attempt out
        it may have been billed: it keeps its worst case, held against the budget; between two attempts
        nothing of it is out (its lost attempts are recorded already) and it keeps none."""
        worst = sending.held.worst_case_usd if sending.out else 0.0
        self.ledger.append(sending.head.then(ts=time.time(), outcome=CANCELLED, worst_case_usd=worst, cost_usd=0.0))
        sending.release(worst)

    def abandoned(self, sending: Sending) -> None:
        """Give back the reservation of a request that ended before it was sent."""
        sending.release(0.0)

    # ------------------------------------------------------------------ results
    def record(self, spec: EndpointSpec, result: CallResult[Any], meta: CallMeta, *, batch: bool = False,
               reported_usage: dict[str, Any] | None = None, reply_model: str = "") -> None:
        """Price a result (a cache hit costs nothing; `batch`: answered through the provider's batch API, at
        the endpoint's batch rate), count it in the running totals and append its `ok` outcome record
        (`reported_usage`: the usage the server reported, where it was implausible and replaced;
        `reply_model`: the model the server said answered, kept where it named one)."""
        result.batch = batch
        result.cost_usd = 0.0 if result.cache_hit else price(spec, result.extra(), batch)
        record = meta.ledger_record().then(
            ts=time.time(),
            run_id=self.run_id,
            endpoint=result.endpoint,
            **({"replica": result.replica} if result.replica else {}),
            model=spec.model,
            **({"reply_model": reply_model} if reply_model else {}),
            request_id=result.request_id,
            **result.extra(),
            latency_s=round(result.latency_s, 6),
            attempts=[asdict(a) for a in result.attempts],
            finish_reason=result.finish_reason,
            **({"reported_usage": reported_usage} if reported_usage else {}),
            outcome="ok",
        )
        self.totals.add_record(record)
        self.ledger.append(record)

    # ------------------------------------------------------------------ resume
    def resume(self, endpoints: Mapping[str, EndpointSpec], cached: Callable[[str], ChatReply | None]) -> int:
        """Before a resumed run's first call: settle the ledger's calls in flight at a kill, then count the
        run's spending against the budget and learn its completion bounds from its finished calls. Returns
        how many calls were reconciled. `cached(key)` is the response cache's reply for a key, if any.

        A `started` call whose reply is in the cache was answered (and billed) before the kill: it gets a
        `reconciled` outcome with its real tokens and cost. The others get an `unknown` outcome that keeps
        their worst case (a reply the server sent but the killed process never received cannot be known
        from here; a cached reply already named by an outcome record belongs to the same request paid by
        a later process, not to this one): they are possibly billed, shown apart, and still held at their
        worst case against the budget (the provider may have billed them), so the resumed budget starts
        from known dollars plus those worst cases. A batch call still waiting at the provider is left in
        flight, held at its worst case: the resumed run collects its reply."""
        records = self.records()
        known_ids = {r.request_id for r in records if r.request_id}
        reconciled = 0
        for started in in_flight(records):
            if started.batch and started.cache_key:
                continue
            reply = cached(started.cache_key) if started.cache_key else None
            if reply is None or reply.request_id in known_ids:
                unknown = started.without("outcome", "cache_key", "ts").then(ts=time.time(), cost_usd=0.0,
                                                                             outcome=UNKNOWN)
                self.ledger.append(unknown)
                records.append(unknown)
                continue
            spec = endpoints.get(started.endpoint)
            # An endpoint no longer configured has no prices here: its worst case keeps the budget safe.
            dollars = price(spec, reply.token_counts(), reply.batch) if spec else started.worst_case_usd
            named = {"reply_model": reply.model} if reply.model else {}
            outcome = started.without("outcome", "worst_case_usd", "cache_key").then(
                **named, ts=time.time(), request_id=reply.request_id, **reply.token_counts(),
                usage_source=reply.usage_source, attempts=[asdict(a) for a in reply.attempts], cache_hit=False,
                batch=reply.batch, cost_usd=dollars, finish_reason=reply.finish_reason, outcome="reconciled")
            self.ledger.append(outcome)
            records.append(outcome)
            known_ids.add(reply.request_id)
            reconciled += 1
        self.budget.spent_usd = ledger_spent_usd(records)
        for record in answered(records):
            if not record.cache_hit:
                self.bounds.observe(_bound_key(record), record.completion_tokens)
        self._counted_in_flight = {r.call_id: r.worst_case_usd for r in in_flight(records)}
        return reconciled


__all__ = ["Accounting", "LedgerRecord", "Reservation", "Sending", "Totals", "price"]
