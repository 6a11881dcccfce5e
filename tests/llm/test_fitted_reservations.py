"""Reservations that fit: a call reserves its prompt's cost plus a completion bound learned from the
run's finished calls of the same role and stage (max_tokens only before any has finished), so a run
spends its cap instead of stopping at a fraction of it; and the calls in flight may together pass the
cap by no more than one call's worst case, however long the replies turn out."""

from __future__ import annotations

import asyncio

import pytest

from examiner.core.config import EndpointSpec, Settings
from examiner.core.tokens import count_message_tokens
from examiner.core.errors import BudgetExhausted
from examiner.llm import Gateway
from examiner.llm.budget import Budget, CompletionBounds
from examiner.llm.types import CallContext, GenerationConfig
from examiner.simulator import register_behaviour

STAGE = "reservation_test"
MAX_TOKENS = 800
CONCURRENCY = 8


@register_behaviour("candidate", STAGE)
def reply_of_asked_length(req) -> str:  # type: ignore[no-untyped-def]
    """A reply of the number of tokens the request's hints ask for (`tokens`)."""
    return "a" + " word" * (int(req.hints["tokens"]) - 1)


def test_the_bound_is_max_tokens_until_a_call_finished_then_what_the_calls_needed() -> None:
    bounds = CompletionBounds()
    assert bounds.bound(("judge", "judge"), 800) == 800
    for tokens in (40, 60, 50):
        bounds.observe(("judge", "judge"), tokens)
    assert 60 < bounds.bound(("judge", "judge"), 800) <= 100
    assert bounds.bound(("judge", "judge"), 70) == 70, "never above max_tokens"
    assert bounds.bound(("judge", "self_check"), 800) == 800, "each role and stage learns its own"


async def test_calls_in_flight_wait_rather_than_risk_more_than_one_worst_case() -> None:
    budget = Budget(1.0)
    tickets = [await budget.reserve(0.125, 0.375) for _ in range(3)]  # at worst 1.125: less than one call past 1
    fourth = asyncio.ensure_future(budget.reserve(0.125, 0.375))
    await asyncio.sleep(0.01)
    assert not fourth.done(), "the calls in flight could already pass the cap: the next one waits"
    budget.settle(tickets[0], 0.125)
    assert await asyncio.wait_for(fourth, 1) and budget.spent_usd == 0.125 and budget.at_risk_usd == 1.125
    with pytest.raises(BudgetExhausted):
        await Budget(0.0625).reserve(0.125, 0.375)


def settings() -> Settings:
    sim = EndpointSpec(provider="simulated", model="sim", price_input_per_1m=2.5, price_output_per_1m=10.0,
                       max_concurrency=CONCURRENCY, options={"latency_s": 0.01})
    return Settings(endpoints={"sim": sim}, roles={"candidate": "sim"})


def message(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"question {i}: " + "x " * 60}]


async def spend(cap: float, lengths: list[int]) -> tuple[float, float, int]:
    """Calls of the given reply lengths (8 at a time) under a cap until the budget stops them: dollars
    spent, the largest worst case of a call, calls answered."""
    async with Gateway(settings(), None, cache=False, budget_usd=cap) as gw:
        gate, stopped, answered = asyncio.Semaphore(CONCURRENCY), asyncio.Event(), [0]
        worst = gw.settings.endpoints["sim"].worst_case_usd(count_message_tokens(message(999)), MAX_TOKENS)

        async def call(i: int, tokens: int) -> None:
            async with gate:
                if stopped.is_set():
                    return
                try:
                    await gw.chat("candidate", message(i),
                                  GenerationConfig(max_tokens=MAX_TOKENS),
                                  CallContext(stage=STAGE, hints={"tokens": tokens}))
                    answered[0] += 1
                except BudgetExhausted:
                    stopped.set()

        await asyncio.gather(*(call(i, n) for i, n in enumerate(lengths)))
        return gw.budget.spent_usd, worst, answered[0]


async def test_a_cap_at_45_percent_of_the_run_is_spent_to_85_percent() -> None:
    lengths = [40 + (i * 7) % 30 for i in range(120)]  # a judge's short replies: far below max_tokens
    full, _, calls = await spend(1e6, lengths)
    assert calls == len(lengths)
    cap = 0.45 * full
    spent, _, _ = await spend(cap, lengths)
    assert full > 0 and 0.85 * cap <= spent <= cap, (spent, cap)


async def test_replies_longer_than_learned_pass_the_cap_by_at_most_one_worst_case() -> None:
    """The first replies are short (the bound learned is small), then, near the cap, every reply runs to
    max_tokens: a call admitted on its small reservation costs 17 times as much, yet the run stops within
    one call's worst case of its cap (without the wait for calls in flight, 3.6 times the cap was spent)."""
    lengths = [30] * 30 + [MAX_TOKENS] * 60
    cap = 0.02
    spent, worst, calls = await spend(cap, lengths)
    assert calls > 30 and cap < spent <= cap + worst, (spent, cap, worst)
