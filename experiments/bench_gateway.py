"""Gateway overhead: N chat calls through the gateway (cache off) vs a bare AsyncOpenAI client.

Both clients hit the same zero-latency simulated server (in a child process) at the same concurrency,
in one process and one run, alternating in several rounds so machine noise hits both alike.

    python experiments/bench_gateway.py [--calls 2000] [--concurrency 32] [--rounds 3]

Prints both throughputs and the ratio gateway/raw; target ratio >= 0.8.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from openai import AsyncOpenAI

from finish import RESULTS, print_result, save_json

from examiner.core.config import EndpointSpec, Settings
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.simulator import SimulatedProcess



def prompts(n: int, salt: str) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"Question {salt}-{i}: what does unit {i} state?"}] for i in range(n)]


async def raw_client(url: str, calls: int, concurrency: int, salt: str) -> float:
    client = AsyncOpenAI(base_url=url, api_key="none", max_retries=0)
    slots = asyncio.Semaphore(concurrency)

    async def one(messages: list[dict[str, str]]) -> None:
        async with slots:
            await client.chat.completions.create(
                model="sim", messages=messages, max_tokens=64, temperature=0.0, seed=0,
                extra_headers={"X-Examiner-Role": "candidate", "X-Examiner-Stage": "answer"},
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(m) for m in prompts(calls, salt)))
    elapsed = time.perf_counter() - started
    await client.close()
    return calls / elapsed


async def through_gateway(url: str, calls: int, concurrency: int, salt: str, run_dir: Path) -> float:
    spec = EndpointSpec(provider="simulated", base_url=url, model="sim", max_concurrency=concurrency,
                        price_input_per_1m=1.0, price_output_per_1m=2.0)
    settings = Settings(endpoints={"sim": spec}, roles={"candidate": "sim"}, cache=False)
    async with Gateway(settings, run_dir, cache=False) as gateway:
        await gateway.ensure_started("candidate")
        started = time.perf_counter()
        config, context = GenerationConfig(max_tokens=64), CallContext(stage="answer")
        await asyncio.gather(*(gateway.chat("candidate", m, config, context) for m in prompts(calls, salt)))
        elapsed = time.perf_counter() - started
    return calls / elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with SimulatedProcess({}, seed=0) as url, tempfile.TemporaryDirectory() as scratch:
        await raw_client(url, 200, args.concurrency, "warm")  # warm both sides
        raw, gateway = [], []
        for round_index in range(args.rounds):
            raw.append(await raw_client(url, args.calls, args.concurrency, f"raw{round_index}"))
            gateway.append(await through_gateway(url, args.calls, args.concurrency, f"gw{round_index}", Path(scratch) / f"r{round_index}"))
            print(f"round {round_index + 1}: raw {raw[-1]:.0f} calls/s, gateway {gateway[-1]:.0f} calls/s")
    raw_rate, gw_rate = statistics.median(raw), statistics.median(gateway)
    ratio = gw_rate / raw_rate
    overhead_ms = (1 / gw_rate - 1 / raw_rate) * 1000 * args.concurrency
    print(f"\n{args.calls} calls x {args.rounds} rounds, concurrency {args.concurrency}, zero-latency simulated server")
    print(f"bare AsyncOpenAI : {raw_rate:8.0f} calls/s (median)")
    print(f"gateway (no cache): {gw_rate:8.0f} calls/s (median)")
    print(f"ratio gateway/raw: {ratio:.3f} (target >= 0.8)")
    save_json({
        "calls": args.calls, "concurrency": args.concurrency, "rounds": args.rounds,
        "raw_calls_per_s": raw, "gateway_calls_per_s": gateway, "ratio": ratio,
        "overhead_ms_per_call_in_flight": overhead_ms,
    }, RESULTS / "bench_gateway.json")
    print_result({"raw_calls_per_s": f"{raw_rate:.0f}", "gateway_calls_per_s": f"{gw_rate:.0f}", "ratio": f"{ratio:.3f}"})


if __name__ == "__main__":
    asyncio.run(main())
