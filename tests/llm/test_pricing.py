"""Token economics: the ledger bills what a provider bills for the same usage numbers.

Hand-computed cases at list-price shapes: GPT-4o-style cached input at half the input price, batch at half
the whole price, o1-style reasoning tokens inside completion_tokens (billed once), Anthropic-style cache
writes; ledgers written before these fields read as 0/False; the simulated server reports cached tokens
as OpenAI does; `examiner cost` and the exam report show the split."""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core.ledger_record import LedgerRecord
from examiner.core.rundir import LEDGER, RunDir
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.llm.call import CallMeta
from examiner.llm.reply import ChatReply
from examiner.llm.ledger import Ledger, aggregate, answered, cached_input_share, known_usd, per_unit
from examiner.reporting import build_report
from tests.helpers.sample_run import write_sample_run
from examiner.simulator import SimulatedServer
from examiner.simulator.prompt_cache import PromptCache

GPT4O = dict(price_input_per_1m=2.5, price_cached_input_per_1m=1.25, price_output_per_1m=10.0)
"""GPT-4o-style list prices: cached input at half the input price."""
O1 = dict(price_input_per_1m=15.0, price_cached_input_per_1m=7.5, price_output_per_1m=60.0)
"""o1-style: reasoning tokens are billed as output tokens (price_reasoning_per_1m unset)."""
CLAUDE = dict(price_input_per_1m=3.0, price_cached_input_per_1m=0.30, price_cache_write_per_1m=3.75,
              price_output_per_1m=15.0)
"""Anthropic-style: cache reads at a tenth of the input price, cache writes at 1.25 times it."""


def spec(**prices: float) -> EndpointSpec:
    return EndpointSpec(provider="simulated", **prices)


# ------------------------------------------------------------------ cost_usd, by hand

def test_cached_input_is_billed_at_the_cached_price() -> None:
    # 2,000 prompt tokens of which 1,536 cached, 300 completion: 464 x 2.50 + 1,536 x 1.25 + 300 x 10.00.
    assert spec(**GPT4O).cost_usd(2000, 300, cached_tokens=1536) == pytest.approx((1160 + 1920 + 3000) / 1e6)
    # Without a cached price the cached tokens are plain input.
    plain = spec(price_input_per_1m=2.5, price_output_per_1m=10.0)
    assert plain.cost_usd(2000, 300, cached_tokens=1536) == pytest.approx((5000 + 3000) / 1e6)


def test_batch_halves_the_whole_call() -> None:
    standard = spec(**GPT4O).cost_usd(2000, 300, cached_tokens=1536)
    assert spec(**GPT4O).cost_usd(2000, 300, cached_tokens=1536, batch=True) == pytest.approx(0.5 * standard)
    assert spec(**GPT4O, batch_price_factor=0.4).cost_usd(1000, 0, batch=True) == pytest.approx(1000 * 2.5 * 0.4 / 1e6)


def test_reasoning_tokens_inside_completion_are_billed_once() -> None:
    # 1,000 prompt, 5,000 completion of which 4,500 reasoning: OpenAI bills 5,000 output tokens, not 9,500.
    assert spec(**O1).cost_usd(1000, 5000, reasoning_tokens=4500) == pytest.approx((15_000 + 5000 * 60) / 1e6)
    # A reasoning price of its own applies to the reasoning part only.
    priced = spec(**O1, price_reasoning_per_1m=40.0)
    assert priced.cost_usd(1000, 5000, reasoning_tokens=4500) == pytest.approx((15_000 + 500 * 60 + 4500 * 40) / 1e6)


def test_cache_writes_and_reads_anthropic_style() -> None:
    claude = spec(**CLAUDE)
    # First call writes a 4,000-token prefix: 1,000 x 3.00 + 4,000 x 3.75 + 300 x 15.00.
    assert claude.cost_usd(5000, 300, cache_write_tokens=4000) == pytest.approx((3000 + 15_000 + 4500) / 1e6)
    # The next reads it: 1,000 x 3.00 + 4,000 x 0.30 + 300 x 15.00.
    assert claude.cost_usd(5000, 300, cached_tokens=4000) == pytest.approx((3000 + 1200 + 4500) / 1e6)
    # Details larger than their totals are capped, never billed beyond the reported tokens.
    capped = claude.cost_usd(100, 10, cached_tokens=500, reasoning_tokens=50)
    assert capped == pytest.approx((100 * 0.3 + 10 * 15) / 1e6)


def test_worst_case_covers_every_split() -> None:
    for prices in (GPT4O, O1, CLAUDE, {**O1, "price_reasoning_per_1m": 90.0}):
        endpoint = spec(**prices)
        worst = endpoint.worst_case_usd(2000, 500)
        for cached, written, reasoning in ((0, 0, 0), (1024, 0, 0), (0, 2000, 0), (0, 0, 500), (1000, 1000, 250)):
            assert endpoint.cost_usd(2000, 500, cached_tokens=cached, cache_write_tokens=written,
                                     reasoning_tokens=reasoning) <= worst + 1e-15


def test_simulated_twin_keeps_every_price() -> None:
    settings = Settings(endpoints={"gpt": EndpointSpec(base_url="http://x/v1", **CLAUDE, batch_price_factor=0.6)},
                        roles={"candidate": "gpt"})
    twin = settings.simulated().endpoints["sim-gpt"]
    assert twin.prices() == settings.endpoints["gpt"].prices()


# ------------------------------------------------------------------ the gateway's ledger against a provider's bill

CANNED = {  # user message -> the usage a provider reports (details inside their totals)
    "plain": {"prompt_tokens": 800, "completion_tokens": 120},
    "cached": {"prompt_tokens": 2000, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1536}},
    "reasoning": {"prompt_tokens": 1000, "completion_tokens": 5000,
                  "completion_tokens_details": {"reasoning_tokens": 4500}},
    "write": {"prompt_tokens": 5000, "completion_tokens": 300, "prompt_tokens_details": {"cache_write_tokens": 4000}},
}


@pytest.fixture
async def canned_server():
    """An OpenAI-compatible endpoint answering each case with its canned usage."""
    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        case = body["messages"][-1]["content"]
        usage = dict(CANNED[case], total_tokens=CANNED[case]["prompt_tokens"] + CANNED[case]["completion_tokens"])
        return web.json_response({"id": f"c-{case}", "object": "chat.completion", "created": 0, "model": "m",
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "ok"}}],
                                  "usage": usage})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    await runner.cleanup()


def provider_bill(prices: dict[str, float], usage: dict[str, Any], batch: bool = False) -> float:
    """What the provider charges, written out from its price list (not through EndpointSpec.cost_usd)."""
    prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
    cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)
    written = usage.get("prompt_tokens_details", {}).get("cache_write_tokens", 0)
    dollars = ((prompt - cached - written) * prices["price_input_per_1m"]
               + cached * prices.get("price_cached_input_per_1m", prices["price_input_per_1m"])
               + written * prices.get("price_cache_write_per_1m", prices["price_input_per_1m"])
               + completion * prices["price_output_per_1m"]) / 1e6
    return dollars * (0.5 if batch else 1.0)


async def test_ledger_total_equals_the_providers_bill(canned_server: str, tmp_path: Path) -> None:
    prices = CLAUDE
    settings = Settings(endpoints={"p": EndpointSpec(base_url=canned_server, model="m", **prices)},
                        roles={"candidate": "p"})
    async with Gateway(settings, tmp_path, cache=False) as gw:
        for case in CANNED:
            result = await gw.chat("candidate", [{"role": "user", "content": case}], GenerationConfig(max_tokens=5000),
                                   CallContext(stage="answer", unit_ids=("u1",)))
            assert result.cost_usd == pytest.approx(provider_bill(prices, CANNED[case]), rel=1e-12), case
        # A batch result goes through the same record path with batch=True (the batch runner's way in).
        reply = ChatReply(texts=["ok"], finish_reason="stop", request_id="batch-1", prompt_tokens=2000,
                          completion_tokens=300, cached_tokens=1536)
        batch_result = reply.result(endpoint="p", model="m", hit=False, latency_s=0.0)
        meta = CallMeta.for_call("candidate", CallContext(stage="answer", unit_ids=("u2",)))
        gw.accounting.record(settings.endpoints["p"], batch_result, meta, batch=True)
        assert batch_result.batch and batch_result.cost_usd == pytest.approx(
            provider_bill(prices, CANNED["cached"], batch=True), rel=1e-12)
        totals = gw.totals
    records = answered(RunDir(tmp_path).ledger_records())
    hand = sum(provider_bill(prices, usage) for usage in CANNED.values()) + \
        provider_bill(prices, CANNED["cached"], batch=True)
    assert known_usd(records) == pytest.approx(hand, rel=1e-12)
    assert totals.cost_usd == pytest.approx(hand, rel=1e-12)
    by_case = {r.request_id: r for r in records}
    assert by_case["c-cached"].cached_tokens == 1536 and by_case["c-reasoning"].reasoning_tokens == 4500
    assert by_case["c-write"].cache_write_tokens == 4000 and by_case["batch-1"].batch is True
    assert not by_case["c-plain"].batch
    (row,) = aggregate(records, by=())
    assert (row["calls"], row["batch_calls"], row["cached_tokens"], row["reasoning_tokens"]) == (5, 1, 3072, 4500)
    assert row["batch_usd"] == pytest.approx(provider_bill(prices, CANNED["cached"], batch=True))
    assert row["uncached_input_tokens"] == 800 + 464 + 1000 + 1000 + 464
    assert row["output_tokens"] == 120 + 300 + 500 + 300 + 300
    assert cached_input_share(records) == pytest.approx(3072 / (800 + 2000 + 1000 + 5000 + 2000))
    split = {b: r for r in aggregate(records, by=("batch",)) for b in [r["batch"]]}
    assert split[True]["calls"] == 1 and split[False]["calls"] == 4


def test_a_ledger_without_the_new_fields_still_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    old = [{"call_id": "a", "role": "judge", "stage": "judge", "unit_ids": ["u1"], "prompt_tokens": 1000,
            "completion_tokens": 100, "cost_usd": 0.004, "cache_hit": False, "outcome": "ok"},
           {"call_id": "b", "role": "judge", "stage": "judge", "unit_ids": ["u1"], "prompt_tokens": 1000,
            "completion_tokens": 100, "cost_usd": 0.0, "cache_hit": True, "outcome": "ok"}]
    (tmp_path / LEDGER).write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    (row,) = aggregate(answered(RunDir(tmp_path).ledger_records()), by=("role", "batch"))
    assert row["batch"] is False and row["calls"] == 1 and row["cache_hits"] == 1
    details = (row["cached_tokens"], row["reasoning_tokens"], row["cache_write_tokens"], row["batch_calls"])
    assert details == (0, 0, 0, 0)
    assert row["uncached_input_tokens"] == 1000 and row["cached_input_share"] == 0.0
    assert per_unit(RunDir(tmp_path).ledger_records())["u1"]["cached_tokens"] == 0
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["cost", str(tmp_path)]) == 0
    assert "0.004000" in capsys.readouterr().out


# ------------------------------------------------------------------ the simulated server's prompt cache

def _post(url: str, model: str, system: str, user: str, max_tokens: int = 8) -> dict[str, Any]:
    import httpx

    body = {"model": model, "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
    reply = httpx.post(url + "/chat/completions", json=body, timeout=30,
                       headers={"X-Examiner-Role": "candidate", "X-Examiner-Stage": "answer"})
    return reply.json()["usage"]


def test_simulated_server_caches_prefixes_of_1024_tokens_in_128_steps() -> None:
    from examiner.core.tokens import count_tokens

    long_system = " ".join(f"rule{i}" for i in range(700))  # well over 1,024 tokens
    short_system = "Answer briefly."
    with SimulatedServer({}, seed=0) as url:
        first = _post(url, "m", long_system, "first question")
        again = _post(url, "m", long_system, "second question")
        other_model = _post(url, "n", long_system, "second question")
        short = [_post(url, "m", short_system, "same question") for _ in range(2)]
    shared = 3 + count_tokens(long_system) + 3  # the system message, framed, and the user message's frame
    assert shared > 1024 + 128
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    assert again["prompt_tokens_details"]["cached_tokens"] == shared // 128 * 128
    assert other_model["prompt_tokens_details"]["cached_tokens"] == 0, "the cache is kept per model"
    assert [s["prompt_tokens_details"]["cached_tokens"] for s in short] == [0, 0], "below 1,024 tokens: no caching"


def test_prompt_cache_total_does_not_depend_on_arrival_order() -> None:
    base = list(range(1, 1300))
    prompts = [array("I", base + [5000 + i] * 300) for i in range(3)] + [array("I", base[:1100])]
    totals = []
    for order in (prompts, prompts[::-1]):
        cache = PromptCache()
        totals.append(sum(cache.cached_tokens("m", p) for p in order))
    assert totals[0] == totals[1] > 0


async def test_simulated_reasoning_tokens_reach_the_ledger(tmp_path: Path) -> None:
    prices = dict(price_input_per_1m=1.0, price_output_per_1m=4.0, price_reasoning_per_1m=2.0)
    settings = Settings(endpoints={"r": EndpointSpec(provider="simulated", model="r", options={"reasoning_tokens": 40},
                                                     **prices)}, roles={"candidate": "r"})
    async with Gateway(settings, tmp_path, cache=False) as gw:
        result = await gw.chat("candidate", [{"role": "user", "content": "why?"}], GenerationConfig(max_tokens=64))
    assert result.reasoning_tokens == 40 and result.completion_tokens > 40
    visible = result.completion_tokens - 40
    assert result.cost_usd == pytest.approx((result.prompt_tokens * 1.0 + visible * 4.0 + 40 * 2.0) / 1e6, rel=1e-12)
    (record,) = answered(RunDir(tmp_path).ledger_records())
    assert record.reasoning_tokens == 40 and record.cost_usd == pytest.approx(result.cost_usd)


# ------------------------------------------------------------------ the tables

def _with_priced_calls(run: Path) -> None:
    """Append a batch call with cached and reasoning tokens, and a standard one with a cache write."""
    extra = [{"call_id": "x1", "role": "judge", "stage": "judge", "unit_ids": [], "prompt_tokens": 2048,
              "cached_tokens": 1024, "completion_tokens": 200, "reasoning_tokens": 150, "batch": True,
              "cost_usd": 0.01, "cache_hit": False, "outcome": "ok"},
             {"call_id": "x2", "role": "judge", "stage": "judge", "unit_ids": [], "prompt_tokens": 1500,
              "cache_write_tokens": 1200, "completion_tokens": 10, "cost_usd": 0.02, "cache_hit": False,
              "outcome": "ok"}]
    ledger = Ledger(run / LEDGER)  # repairs a torn tail before appending, as a resumed run does
    for record in extra:
        ledger.append(LedgerRecord.build(**record))
    ledger.close()


def test_examiner_cost_shows_the_split_columns_and_batch_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    _with_priced_calls(run)
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["cost", str(run), "--by", "role"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "calls" in line and "dollars" in line)
    for column in ("role", "batch", "hits", "input", "cached", "write", "output", "reason"):
        assert column in header, column
    judge_rows = [line for line in out.splitlines() if line.strip("│ ").startswith("judge")]
    assert any("batch" in line and "1,024" in line and "150" in line for line in judge_rows)
    assert any("std" in line for line in judge_rows)
    assert "prompt-cache hit share" in out and "batch calls: 1 of" in out


def test_exam_report_splits_tokens_and_batch(tmp_path: Path) -> None:
    run = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    _with_priced_calls(run)
    paths = build_report(run)
    cost = json.loads(paths["json"].read_text(encoding="utf-8"))["cost"]
    pricing = {(r["role"], r["batch"]): r for r in cost["by_pricing"]}
    batch = pricing[("judge", True)]
    counts = (batch["calls"], batch["cached_tokens"], batch["reasoning_tokens"], batch["output_tokens"])
    assert counts == (1, 1024, 150, 50)
    assert pricing[("judge", False)]["cache_write_tokens"] == 1200
    assert cost["total"]["batch_calls"] == 1 and cost["total"]["batch_usd"] == pytest.approx(0.01)
    markdown = paths["md"].read_text(encoding="utf-8")
    assert "| role | pricing | calls | input | cached | write | output | reason | cache share | dollars |" in markdown
    assert "| judge | batch | 1 | 1,024 | 1,024 | 0 | 50 | 150 | 50.0% | 0.0100 |" in markdown
    assert "Tokens as billed" in paths["html"].read_text(encoding="utf-8")
