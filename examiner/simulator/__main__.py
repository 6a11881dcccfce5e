"""Run the simulated backend as a process: prints its base URL on the first line of stdout, then serves
until interrupted or terminated.

    python -m examiner.simulator --port 0 --seed 0 --options '{"latency_s": 0}'
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys

from examiner.simulator.server import SimState, start_site


async def _serve(state: SimState, host: str, port: int) -> None:
    runner, base_url = await start_site(state, host, port)
    print(base_url, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except NotImplementedError:  # pragma: no cover - Windows
            pass
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examiner.simulator", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=None, help="default: options.seed or 0")
    parser.add_argument("--options", default="{}", help="EndpointSpec.options of a simulated endpoint, as JSON")
    args = parser.parse_args(argv)
    try:
        options = json.loads(args.options)
        if not isinstance(options, dict):
            raise ValueError("options must be a JSON object")
        state = SimState(options, args.seed)
    except (ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    asyncio.run(_serve(state, args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
