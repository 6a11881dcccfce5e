"""Where an endpoint lives: a configured URL, or a server examiner starts itself (local model, simulator).

Managed servers are started on first use and stopped when the gateway closes, so a run never leaves a
process behind. Several endpoints may share one managed local server (it is the same model).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from examiner.core.config import EndpointSpec


class ManagedServer(Protocol):
    def start(self) -> str: ...
    def stop(self) -> None: ...


class _SharedLocal:
    """The process-wide local model server: every gateway reuses it, and it stops at interpreter exit
    (two llama.cpp servers on one machine would only fight over the cores)."""

    def start(self) -> str:
        from examiner.llm.local import shared_server

        server = shared_server()
        return server.base_url

    def stop(self) -> None:
        """Left running for the next gateway of this process; local.py stops it at exit."""


class ServerPool:
    """Starts managed servers lazily, one per distinct (provider, options), and stops them all."""

    def __init__(self) -> None:
        self._servers: dict[str, ManagedServer] = {}
        self._urls: dict[str, str] = {}
        self._lock = threading.Lock()  # first calls of several endpoints start servers from worker threads

    def base_url(self, spec: EndpointSpec) -> str:
        if spec.provider == "openai":
            assert spec.base_url is not None
            return spec.base_url
        key = f"{spec.provider}:{sorted(spec.options.items())!r}"
        with self._lock:
            if key not in self._urls:
                server = self._make(spec)
                self._urls[key] = server.start()
                self._servers[key] = server
            return self._urls[key]

    @staticmethod
    def _make(spec: EndpointSpec) -> ManagedServer:
        if spec.provider == "local":
            return _SharedLocal()
        from examiner.simulator import SimulatedServer

        options: dict[str, Any] = dict(spec.options)
        return SimulatedServer(options=options, seed=int(options.get("seed", spec.seed or 0)))

    def stop_all(self) -> None:
        for server in self._servers.values():
            try:
                server.stop()
            except Exception:  # noqa: BLE001 - best effort at shutdown
                pass
        self._servers.clear()
        self._urls.clear()
