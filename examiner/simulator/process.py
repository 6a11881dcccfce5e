"""The simulated backend in a child process, so a benchmark client does not share its GIL."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Mapping
from typing import Any


class SimulatedProcess:
    """`python -m examiner.simulator` as a child; `start()` returns the base URL it printed."""

    def __init__(self, options: Mapping[str, Any] | None = None, seed: int = 0, port: int = 0,
                 host: str = "127.0.0.1") -> None:
        self.args = [sys.executable, "-m", "examiner.simulator", "--host", host, "--port", str(port),
                     "--seed", str(seed), "--options", json.dumps(dict(options or {}))]
        self.proc: subprocess.Popen[str] | None = None
        self.base_url: str | None = None

    def start(self) -> str:
        if self.base_url is not None:
            return self.base_url
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http"):
            self.stop()
            raise RuntimeError(f"simulated backend did not start (printed {line!r})")
        self.base_url = line
        return line

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None
        self.base_url = None

    def stats(self) -> dict[str, Any]:
        """The child's counters (GET /sim/stats): requests served and faults injected, by kind."""
        if self.base_url is None:
            raise RuntimeError("the simulated backend is not running")
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/sim/stats", timeout=10) as reply:
            return json.loads(reply.read())

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
