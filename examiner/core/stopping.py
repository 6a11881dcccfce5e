"""Stop signals: SIGINT (Ctrl-C) and SIGTERM (docker stop, systemd, Kubernetes, CI runners) end a run the
same orderly way.

`run_stoppable` is `asyncio.run` with both signals turned into a cancellation of the main task. The
cancellation reaches every model call in flight: the gateway writes a `cancelled` outcome for each, the
exam writes run.json as `interrupted`, and the CLI prints one line saying how to continue and exits with
128 + the signal number (130 for SIGINT, 143 for SIGTERM), as a shell reports a process a signal ended.
Without a handler SIGTERM would kill the process at once, leaving run.json `running` and the calls in
flight unsettled.

The signals stay handled until the process ends: the CLI installs `hold_stop_signals` first, so a signal
outside the event loop (before it starts, after it closed, while a later signal would otherwise hit the
default action) raises Interrupted where the main thread is, and every signal after the first is ignored
while the first one's unwinding writes the last status. Synchronous work inside the loop that takes a while
(writing the reports) runs under `stop_signals_raise`, because the loop only sees a signal when it gets
control back, which such work does not give it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine, Iterator
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


_RECEIVED: list[int] = []
"""The stop signals this process received, in order: after the first, every later one is ignored."""


class Interrupted(BaseException):
    """A stop signal ended the command after its work was cancelled and saved. A BaseException, as
    KeyboardInterrupt is, so that no `except Exception` on the way swallows the stop."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        """128 + the signal number: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


def stop_received() -> int | None:
    """The first stop signal this process received, or None."""
    return _RECEIVED[0] if _RECEIVED else None


def forget_stops() -> None:
    """Clear the record of stop signals received (a test that runs several commands in one process)."""
    _RECEIVED.clear()


def _on_stop(signum: int, frame: FrameType | None) -> None:
    """The handler outside the event loop: the first stop signal raises in the main thread (SIGTERM
    Interrupted, SIGINT KeyboardInterrupt as Python's own handler does, which servers such as `examiner
    view` stop on), later ones are ignored so that they cannot cut the first one's unwinding short."""
    first = not _RECEIVED
    _RECEIVED.append(signum)
    if first:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(signum)


def hold_stop_signals() -> dict[int, Any]:
    """Handle SIGINT and SIGTERM for the rest of the process (the CLI calls this before any work): a stop
    signal is an orderly Interrupted, never the default action that ends the process before run.json
    says how it stopped. Returns the handlers it replaced (for `restore_signals`). Only possible in the
    main thread; elsewhere nothing changes."""
    previous: dict[int, Any] = {}
    for signum in STOP_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, _on_stop)
        except ValueError:  # not the main thread
            break
    return previous


def restore_signals(previous: dict[int, Any]) -> None:
    """Put back the handlers `hold_stop_signals` or `stop_signals_raise` replaced."""
    with _signals_blocked():
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Around synchronous work inside the event loop (report writing): a stop signal raises Interrupted
    in it at once, instead of waiting for the loop to get control back after the work is done. The
    handlers in force before (the loop's) are put back after; in another thread nothing changes."""
    previous = hold_stop_signals()
    try:
        yield
    finally:
        restore_signals(previous)


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold the stop signals back while handlers are swapped; one that came meanwhile is delivered after."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion; a stop signal cancels it and raises Interrupted once it has unwound.

    A second signal while the first cancellation unwinds is ignored: the unwinding writes the outcomes
    that make the run resumable, and cutting it short would lose them (kill -9 remains for that). The
    handlers in force before are put back when the loop is done; under `hold_stop_signals` (the CLI) they
    go on ignoring later signals while the command finishes, so a second SIGTERM still ends it with 143."""
    received: list[int] = []
    already = len(_RECEIVED)

    async def guarded() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def stop(signum: int) -> None:
            first = len(_RECEIVED) == already  # a signal another handler raised on counts as the first
            _RECEIVED.append(signum)
            if first:
                received.append(signum)
                task.cancel()

        installed: dict[int, Any] = {}
        for signum in STOP_SIGNALS:
            try:
                before = signal.getsignal(signum)
                loop.add_signal_handler(signum, stop, signum)
                installed[signum] = before
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                pass
        try:
            return await main
        finally:
            with _signals_blocked():  # no default action between the loop's handler and the one before
                for number, handler in installed.items():
                    loop.remove_signal_handler(number)
                    if handler is not None:
                        signal.signal(number, handler)

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise


def was_cancelled(exc: BaseException) -> bool:
    """Whether `exc` is the cancellation a stop signal (or any cancel of the run's task) raises."""
    return isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, Interrupted))


__all__ = ["Interrupted", "STOP_SIGNALS", "forget_stops", "hold_stop_signals", "restore_signals", "run_stoppable",
           "stop_received", "stop_signals_raise", "was_cancelled"]
