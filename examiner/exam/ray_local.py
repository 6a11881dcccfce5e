"""How examiner starts or joins Ray: quiet, without a dashboard, and a local instance on loopback only.

Why: Ray's defaults suit a cluster, not a command a person watches. Its workers' output and its own
warnings (e.g. token authentication) reached the exam's terminal, and a local instance asked for 127.0.0.1
still listened on the machine's outward address: Ray turns a loopback `_node_ip_address` into a "remotely
reachable" one unless its cluster mode is off (`ray._private.ray_constants.ENABLE_RAY_CLUSTER`, the
environment variable RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER, measured with ray 2.60). A local instance started here
turns that mode off while it runs, so its GCS, raylet and workers bind 127.0.0.1; joining a cluster
(`address`: `auto`, `ray://head:10001`) changes nothing of it.

ray.init also installs its own SIGTERM handler in the driver (one that exits at once); examiner's stop
handling (examiner.core.stopping: the run marked `interrupted`, exit 143) is put back right after it.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LOOPBACK = "127.0.0.1"
CLUSTER_MODE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch for its cluster mode; 0 keeps a local instance on loopback (read by every Ray process)."""


def init_options(address: str) -> dict[str, Any]:
    """ray.init's arguments: no dashboard, only errors logged to this terminal, workers' output kept in Ray's
    log files (log_to_driver off); a local instance (no `address`) on LOOPBACK."""
    options: dict[str, Any] = {"address": address or None, "include_dashboard": False,
                               "logging_level": logging.ERROR, "log_to_driver": False}
    if not address:
        options["_node_ip_address"] = LOOPBACK
    return options


@contextmanager
def loopback_only() -> Iterator[None]:
    """Ray's cluster mode off in this process and the processes it starts, restored on exit."""
    from ray._private import ray_constants

    before_env, before = os.environ.get(CLUSTER_MODE_ENV), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[CLUSTER_MODE_ENV] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before
        if before_env is None:
            os.environ.pop(CLUSTER_MODE_ENV, None)
        else:
            os.environ[CLUSTER_MODE_ENV] = before_env


def init_keeping_sigterm(ray: Any, **options: Any) -> None:
    """ray.init, with the SIGTERM handler that was in place before it put back (see the module docstring)."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main else None
    try:
        ray.init(**options)
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


@contextmanager
def ray_session(ray: Any, address: str = "", **extra: Any) -> Iterator[None]:
    """Ray for the duration of the block: the instance already initialised in this process as it is, else
    one started (or joined at `address`) with init_options and shut down afterwards; `extra` goes to ray.init."""
    if ray.is_initialized():
        yield
        return
    if address:
        init_keeping_sigterm(ray, **init_options(address), **extra)
        try:
            yield
        finally:
            ray.shutdown()
        return
    with loopback_only():
        init_keeping_sigterm(ray, **init_options(address), **extra)
        try:
            yield
        finally:
            ray.shutdown()


__all__ = ["CLUSTER_MODE_ENV", "LOOPBACK", "init_keeping_sigterm", "init_options", "loopback_only", "ray_session"]
