"""Where an endpoint lives and what its requests carry besides the body: one provider plugin per kind.

Every provider speaks the OpenAI chat-completions protocol, so the transport treats them alike; a plugin
says (a) the root URL of the endpoint's server: a configured URL, or a server examiner starts itself
(local model, simulator), and (b) the request metadata its server reads. Only the simulated provider
sends any: the call's role, stage and hints as `X-Examiner-*` headers (examiner.simulator.headers),
which the simulated server chooses its behaviour from. A real endpoint gets the request body and nothing
else of examiner's. This module is the one place in the gateway that reaches the simulator.

A simulated endpoint is started by examiner (one server per distinct options), unless it names the
`base_url` of a simulated server already running (e.g. one in a child process), which is then used as is.

Managed servers are started on first use and stopped when the gateway closes, so a run never leaves a
process behind. Several endpoints may share one managed local server (it is the same model).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import httpx

from examiner.core.config import EndpointSpec
from examiner.llm.call import CallMeta
from examiner.simulator.headers import request_headers


class ManagedServer(Protocol):
    """A server examiner starts for an endpoint: `start` returns its root URL."""

    def start(self) -> str: ...
    def stop(self) -> None: ...


class Provider(Protocol):
    """What the transport needs from an endpoint's kind."""

    def base_url(self, spec: EndpointSpec) -> str:
        """The root URL of the endpoint's (first) server; may block while a managed server starts."""
        ...

    def request_headers(self, meta: CallMeta) -> dict[str, str]:
        """The extra HTTP headers of a request (also put in its provider batch line)."""
        ...

    def stop(self) -> None:
        """Stop the servers this provider started."""
        ...


class OpenAICompatible:
    """A configured OpenAI-compatible server (`openai`): its URL, and no extra headers."""

    def base_url(self, spec: EndpointSpec) -> str:
        assert spec.base_url is not None  # EndpointSpec requires it for `openai`
        return spec.base_url

    def request_headers(self, meta: CallMeta) -> dict[str, str]:
        return {}

    def stop(self) -> None:
        """Nothing was started."""


class _SharedLocal:
    """The process-wide local model server: every gateway reuses it, and it stops at interpreter exit
    (two llama.cpp servers on one machine would only fight over the cores)."""

    def start(self) -> str:
        from examiner.llm.local import shared_server

        return shared_server().base_url

    def stop(self) -> None:
        """Left running for the next gateway of this process; local.py stops it at exit."""


class ManagedServers:
    """Starts managed servers lazily, one per distinct (provider, options), and stops them all."""

    def __init__(self) -> None:
        self._servers: dict[str, ManagedServer] = {}
        self._urls: dict[str, str] = {}
        self._lock = threading.Lock()  # first calls of several endpoints start servers from worker threads

    def url(self, spec: EndpointSpec, factory: Callable[[EndpointSpec], ManagedServer]) -> str:
        """The root URL of the server for `spec`, started with `factory(spec)` on first use."""
        key = f"{spec.provider}:{sorted(spec.options.items())!r}"
        with self._lock:
            if key not in self._urls:
                server = factory(spec)
                self._urls[key] = server.start()
                self._servers[key] = server
            return self._urls[key]

    def stop_all(self) -> None:
        for server in self._servers.values():
            try:
                server.stop()
            except Exception:  # noqa: BLE001 - best effort at shutdown
                pass
        self._servers.clear()
        self._urls.clear()


class LocalModel:
    """The embedded local model (`local`): started by examiner; each request carries the key that server
    was started with (it serves no caller without it)."""

    def __init__(self) -> None:
        self._servers = ManagedServers()

    def base_url(self, spec: EndpointSpec) -> str:
        return self._servers.url(spec, lambda _spec: _SharedLocal())

    def request_headers(self, meta: CallMeta) -> dict[str, str]:
        from examiner.llm.local import shared_headers

        return shared_headers()

    def stop(self) -> None:
        self._servers.stop_all()


def _start_simulator(spec: EndpointSpec) -> ManagedServer:
    from examiner.simulator import SimulatedServer

    options: dict[str, Any] = dict(spec.options)
    return SimulatedServer(options=options, seed=int(options.get("seed", spec.seed or 0)))


class Simulated:
    """The simulated test backend (`simulated`): started by examiner unless base_url names a running one;
    the only provider whose requests carry the call's role, stage and hints."""

    def __init__(self) -> None:
        self._servers = ManagedServers()

    def base_url(self, spec: EndpointSpec) -> str:
        return spec.base_url or self._servers.url(spec, _start_simulator)

    def request_headers(self, meta: CallMeta) -> dict[str, str]:
        return request_headers(meta.role, meta.context.stage, meta.hints())

    def stop(self) -> None:
        self._servers.stop_all()


async def register_oracle(base_url: str, gold: Mapping[str, Any]) -> None:
    """Hand gold labels to a simulated server (its POST /sim/oracle route), so simulated judges have an
    accuracy to aim for."""
    async with httpx.AsyncClient(timeout=30) as client:
        reply = await client.post(base_url.removesuffix("/v1") + "/sim/oracle", json={"items": dict(gold)})
        reply.raise_for_status()


class Providers:
    """One plugin per provider kind for a gateway; `stop_all` stops what they started."""

    def __init__(self) -> None:
        self._plugins: dict[str, Provider] = {"openai": OpenAICompatible(), "local": LocalModel(),
                                              "simulated": Simulated()}

    def of(self, spec: EndpointSpec) -> Provider:
        """The plugin of the endpoint's provider."""
        return self._plugins[spec.provider]

    def stop_all(self) -> None:
        for plugin in self._plugins.values():
            plugin.stop()


__all__ = ["ManagedServer", "ManagedServers", "OpenAICompatible", "Provider", "Providers", "Simulated",
           "register_oracle"]
