"""Write one ledger holding every kind of record examiner writes (started, ok, a cache hit, reconciled,
unknown, lost, failed, stopped, cancelled, a re-ask, a reply that named its model, an implausible usage,
a replica, a batch call), through the accounting API the gateway uses, with the clock fixed, so two
versions of the writer can be compared byte for byte (tests/fixtures/ledger/every_kind.jsonl was written
by the writer that built records as dicts)."""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

from examiner.core.config import EndpointSpec
from examiner.llm.accounting import Accounting
from examiner.llm.budget import Budget
from examiner.llm.call import CallMeta
from examiner.llm.ledger import Ledger
from examiner.llm.reply import ChatReply
from examiner.llm.sending import Reservation
from examiner.llm.transport import ChatRequest
from examiner.llm.types import Attempt, CallContext, CallResult

SPEC = EndpointSpec(provider="simulated", model="sim-model", price_input_per_1m=1.5, price_output_per_1m=6.0)
CLOCK = 1_700_000_000.25


def _meta(call_id: str, *, repair: int = 0) -> CallMeta:
    context = CallContext(stage="judge", round=2, unit_ids=("u1", "u2"), item_id="q7")
    return CallMeta("judge", context, "judge", call_id=call_id, repair=repair)


def _held() -> Reservation:
    return Reservation(None, 0.000125, 0.0005, 1, 64, 40)


def _result(**changes: object) -> CallResult[str]:
    fields: dict[str, object] = dict(text="x", parsed="x", prompt_tokens=40, completion_tokens=12, cached_tokens=8,
                                     request_id="req-1", endpoint="sim", latency_s=0.1234567891,
                                     attempts=[Attempt("ok", 0.12)], finish_reason="stop")
    fields.update(changes)
    return CallResult(**fields)  # type: ignore[arg-type]


def write_every_kind(path: Path) -> None:
    """Append one record of each kind to the ledger at `path` (which should not exist yet)."""
    with mock.patch.object(time, "time", return_value=CLOCK):
        accounting = Accounting(Ledger(path), Budget(), run_id="run-1")
        # answered: its started record, then ok (a re-ask, a reply that named its model)
        sending = accounting.sending(_held(), "sim", SPEC, _meta("a1", repair=1), "key-a1", False)
        sending.leaving()
        accounting.record(SPEC, _result(), _meta("a1", repair=1), reply_model="sim-model-2026")
        # a cache hit (no started record), from a replica
        accounting.record(SPEC, _result(cache_hit=True, replica="http://replica-2", request_id="req-0"), _meta("a2"))
        # implausible usage, answered through a batch
        sending = accounting.sending(_held(), "sim", SPEC, _meta("a3"), "key-a3", True)
        sending.leaving()
        accounting.record(SPEC, _result(usage_source="implausible"), _meta("a3"), batch=True,
                          reported_usage={"prompt_tokens": -1, "why": "negative"})
        # a lost attempt, then failed for good
        sending = accounting.sending(_held(), "sim", SPEC, _meta("f1"), "key-f1", False)
        sending.leaving()
        sending.landed("timeout", ChatRequest([{"role": "user", "content": "q"}], {"max_tokens": 64}))
        accounting.failed(sending, [Attempt("timeout", 30.0, 1.5, "read timeout"), Attempt("500", 0.2)])
        # stopped by the budget between two attempts
        sending = accounting.sending(_held(), "sim", SPEC, _meta("f2"), "key-f2", False)
        accounting.failed(sending, [], why="budget $1.0000 reached")
        # cancelled with an attempt out
        sending = accounting.sending(_held(), "sim", SPEC, _meta("c1"), "key-c1", False)
        sending.leaving()
        accounting.cancelled(sending)
        # two calls killed in flight: one whose reply reached the cache (reconciled), one not (unknown)
        for call_id in ("k1", "k2"):
            accounting.sending(_held(), "sim", SPEC, _meta(call_id), f"key-{call_id}", False).leaving()
        cached = ChatReply(texts=["y"], prompt_tokens=30, completion_tokens=5, request_id="req-k1",
                           attempts=[Attempt("ok", 0.5)], model="sim-model-2026", finish_reason="stop")
        accounting.resume({"sim": SPEC}, lambda key: cached if key == "key-k1" else None)
        accounting.ledger.close()
