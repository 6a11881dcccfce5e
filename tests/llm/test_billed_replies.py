"""Every billed reply is on the bill (issue 37, items 2, 3, 3b and 4).

A local server (tests/helpers/billing_server.py) bills every reply it makes and sends some late (past the
client's timeout), cut (HTTP 200, JSON body cut short), dropped (connection closed after the request),
with absurd usage, or dripping a byte at a time. The ledger must account for all of it: what the server
billed is at most the ledger's known dollars plus the worst cases of its possibly billed attempts, a capped
run passes its cap by at most one call's worst case, absurd usage is booked at the worst case, and a
dripping reply ends its attempt at the attempt's deadline.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from examiner.core import rundir
from examiner.core.config import EndpointSpec, Settings
from examiner.core.tokens import count_message_tokens
from examiner.llm import Gateway, GenerationConfig, ModelCallError
from examiner.llm.ledger import (LOST, STARTED, accounted_usd, answered, known_usd, lost, possibly_billed,
                                 read_ledger, settlement, spent_usd)
from tests.helpers.billing_server import BillingServer, call_many, mixed, question

PRICE_IN, PRICE_OUT = 1000.0, 2000.0
MAX_TOKENS = 32


def settings(url: str, **spec: object) -> Settings:
    fields: dict[str, object] = dict(base_url=url, model="billing", price_input_per_1m=PRICE_IN,
                                     price_output_per_1m=PRICE_OUT, timeout_s=0.5, max_attempts=6,
                                     backoff_base_s=0.01, max_concurrency=8)
    fields.update(spec)
    return Settings(endpoints={"paid": EndpointSpec(**fields)}, roles={"candidate": "paid"})  # type: ignore[arg-type]


def worst_case(i: int = 0) -> float:
    return EndpointSpec(base_url="http://x/v1", price_input_per_1m=PRICE_IN, price_output_per_1m=PRICE_OUT) \
        .worst_case_usd(count_message_tokens(question(i)), MAX_TOKENS)


async def test_late_cut_and_dropped_replies_are_possibly_billed_at_their_worst_case(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server = BillingServer(mixed({"late": 0.3, "cut": 0.1, "drop": 0.1, "negative": 0.05, "huge": 0.05}, seed=3),
                           PRICE_IN, PRICE_OUT)
    url = await server.start()
    try:
        with caplog.at_level(logging.WARNING, logger="examiner.llm.accounting"):
            async with Gateway(settings(url), tmp_path, cache=False, budget_usd=1000.0) as gw:
                answered_calls, failed_calls, _ = await call_many(gw, 40, MAX_TOKENS)
                spent_live = gw.budget.spent_usd
        await server.settled()
    finally:
        await server.stop()
    records = read_ledger(tmp_path / rundir.LEDGER)
    assert server.kinds.get("late", 0) >= 5 and server.kinds.get("cut") and server.kinds.get("drop"), server.kinds
    assert answered_calls + failed_calls == 40

    # Every billed reply the ledger did not receive is a possibly billed attempt, and nothing is missed.
    received = {r.request_id for r in answered(records)}
    not_received = [reply_id for reply_id, _ in server.billed if reply_id not in received]
    assert len(lost(records)) >= len(not_received) > 0  # more only if a timeout struck before the server read it
    assert server.billed_usd <= accounted_usd(records) + 1e-9
    assert settlement(records)["possibly_billed"]["calls"] == len(possibly_billed(records)) == len(lost(records))
    # The budget held them as they came, and a resume reads the same from the ledger.
    assert spent_live == pytest.approx(spent_usd(records))

    # Absurd usage: booked at the request's worst case, never negative or 10^9 tokens, one warning each.
    implausible = [r for r in answered(records) if r.usage_source == "implausible"]
    absurd = server.kinds.get("negative", 0) + server.kinds.get("huge", 0)
    assert len(implausible) == absurd > 0
    for record in implausible:
        assert record.cost_usd == pytest.approx(worst_case(0), rel=0.2) and (record.reported_usage or {}).get("why")
    assert all(r.prompt_tokens >= 0 and r.completion_tokens <= MAX_TOKENS for r in answered(records))
    warnings = [m for m in caplog.messages if "implausible usage" in m]
    assert len(warnings) == absurd
    assert 0 < known_usd(records) < server.billed_usd


async def test_a_capped_run_with_late_replies_passes_its_cap_by_at_most_one_call(tmp_path: Path) -> None:
    cap = 20 * worst_case()
    server = BillingServer(mixed({"late": 0.3, "cut": 0.05}, seed=5), PRICE_IN, PRICE_OUT)
    url = await server.start()
    try:
        async with Gateway(settings(url), tmp_path, cache=False, budget_usd=cap) as gw:
            _, _, refused = await call_many(gw, 80, MAX_TOKENS)
        await server.settled()
    finally:
        await server.stop()
    records = read_ledger(tmp_path / rundir.LEDGER)
    assert refused > 0, "the cap stopped the run"
    assert server.billed_usd <= accounted_usd(records) + 1e-9
    overshoot_calls = max(0.0, server.billed_usd - cap) / worst_case()
    assert overshoot_calls <= 1.0, (server.billed_usd, cap)
    assert spent_usd(records) <= cap + worst_case() + 1e-9


async def test_started_is_written_when_the_request_leaves(tmp_path: Path) -> None:
    """A call killed while it waits for a concurrency slot was never sent: no `started` record."""
    server = BillingServer(mixed({"late": 1.0}), PRICE_IN, PRICE_OUT, late_s=0.3)
    url = await server.start()
    try:
        async with Gateway(settings(url, max_concurrency=1, timeout_s=5.0), tmp_path, cache=False) as gw:
            calls = [asyncio.create_task(gw.chat("candidate", question(i), GenerationConfig(max_tokens=MAX_TOKENS)))
                     for i in range(4)]
            while not server.pending:
                await asyncio.sleep(0.01)
            for task in calls:
                task.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
        await server.settled()
    finally:
        await server.stop()
    records = read_ledger(tmp_path / rundir.LEDGER)
    started = [r for r in records if r.outcome == STARTED]
    cancelled = [r for r in records if r.outcome == "cancelled"]
    assert len(started) == len(server.billed) == 1, "three calls waited for the slot and never left"
    assert len(cancelled) == 1 and cancelled[0].worst_case_usd > 0
    assert spent_usd(records) == pytest.approx(cancelled[0].worst_case_usd), "held against the budget"


async def test_a_dripping_reply_ends_its_attempt_at_the_deadline(tmp_path: Path) -> None:
    """A body sent a byte at a time never passes the per-read timeout; the whole-attempt deadline ends it
    long before the body is through (else the call would be answered)."""
    server = BillingServer(mixed({"drip": 1.0}), PRICE_IN, PRICE_OUT, drip_every_s=0.05)
    url = await server.start()
    deadline = 1.0
    try:
        async with Gateway(settings(url, timeout_s=0.5, attempt_deadline_s=deadline, max_attempts=1), tmp_path,
                           cache=False) as gw:
            with pytest.raises(ModelCallError) as caught:
                await gw.chat("candidate", question(0), GenerationConfig(max_tokens=MAX_TOKENS))
        await server.settled()
    finally:
        await server.stop()
    (attempt,) = caught.value.attempts
    assert attempt.status == "timeout" and "deadline" in attempt.detail
    assert attempt.latency_s >= deadline
    assert server.drip_sent[0] < server.body_bytes[0], "the client hung up before the body was through"
    records = read_ledger(tmp_path / rundir.LEDGER)
    assert [r.status for r in records if r.outcome == LOST] == ["timeout"]


def test_the_deadline_defaults_to_twice_the_timeout_and_ten_seconds() -> None:
    assert EndpointSpec(base_url="http://x/v1", timeout_s=30).deadline_s == 70
    assert EndpointSpec(base_url="http://x/v1", timeout_s=30, attempt_deadline_s=45).deadline_s == 45
