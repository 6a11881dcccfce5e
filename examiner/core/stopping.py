"""Stop signals: SIGINT (Ctrl-C) and SIGTERM (docker stop, systemd, Kubernetes, CI runners) end a run the
same orderly way.

`run_stoppable` is `asyncio.run` with both signals turned into a cancellation of the main task. The
cancellation reaches every model call in flight: the gateway writes a `cancelled` outcome for each, the
exam writes run.json as `interrupted`, and the CLI prints one line saying how to continue and exits with
128 + the signal number (130 for SIGINT, 143 for SIGTERM), as a shell reports a process a signal ended.
Without a handler SIGTERM would kill the process at once, leaving run.json `running` and the calls in
flight unsettled.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(Exception):
    """A stop signal ended the command after its work was cancelled and saved."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        """128 + the signal number: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion; a stop signal cancels it and raises Interrupted once it has unwound.

    A second signal while the first cancellation unwinds is ignored: the unwinding writes the outcomes
    that make the run resumable, and cutting it short would lose them (kill -9 remains for that)."""
    received: list[int] = []

    async def guarded() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def stop(signum: int) -> None:
            if not received:
                received.append(signum)
                task.cancel()

        installed = []
        for signum in STOP_SIGNALS:
            try:
                loop.add_signal_handler(signum, stop, signum)
                installed.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                pass
        try:
            return await main
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise


def was_cancelled(exc: BaseException) -> bool:
    """Whether `exc` is the cancellation a stop signal (or any cancel of the run's task) raises."""
    return isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))


__all__ = ["Interrupted", "STOP_SIGNALS", "run_stoppable", "was_cancelled"]
