"""The cost ledger: one append-only JSONL record per model request, and the tables built from it.

Records carry role, stage, round, the knowledge units the call was about, tokens (from the API's
`usage`, or counted with tiktoken when absent), latency, attempts, cache hit and dollars. Cache hits
are kept in the ledger (so a resumed run shows what it reused) but cost nothing.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable

from examiner.core.jsonl import repair_tail


class Ledger:
    """Append-only JSONL writer; each record is flushed at once so a killed run keeps its history."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._handle = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            repair_tail(self.path)
            self._handle = self.path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            return
        line = json.dumps(record, separators=(",", ":"), default=str)
        with self._lock:
            self._handle.write(line + "\n")
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def answered(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of requests that got a reply: a failed request is in the ledger too, with no usage."""
    return [r for r in records if r.get("outcome", "ok") == "ok"]


def spent_usd(records: Iterable[dict[str, Any]]) -> float:
    """Dollars the records were billed (cache hits and failed requests cost nothing): what a resumed
    run has already spent of its budget."""
    return sum(float(r.get("cost_usd", 0.0)) for r in records if not r.get("cache_hit"))


@dataclass
class Usage:
    """Calls, tokens and dollars; cache hits are counted apart and add nothing else (they cost nothing).

    One type for the gateway's running totals and the ledger's cost tables, so both count alike.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, *, cache_hit: bool, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        """Count one answered request."""
        if cache_hit:
            self.cache_hits += 1
            return
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost_usd += cost_usd

    def counters(self) -> dict[str, Any]:
        """The counters as a mapping, in field order."""
        return {f.name: getattr(self, f.name) for f in fields(Usage)}


@dataclass
class CostRow(Usage):
    """Totals for one group of ledger records."""

    key: tuple[Any, ...] = ()
    unit_ids: set[str] = field(default_factory=set)

    def add_record(self, record: dict[str, Any]) -> None:
        self.add(cache_hit=bool(record.get("cache_hit")), prompt_tokens=int(record.get("prompt_tokens", 0)),
                 completion_tokens=int(record.get("completion_tokens", 0)),
                 cost_usd=float(record.get("cost_usd", 0.0)))
        self.unit_ids.update(record.get("unit_ids") or ())

    def as_dict(self, names: tuple[str, ...]) -> dict[str, Any]:
        row = dict(zip(names, self.key))
        row.update(self.counters(), cost_usd=round(self.cost_usd, 8), units=len(self.unit_ids))
        return row


def aggregate(records: Iterable[dict[str, Any]], by: tuple[str, ...] = ("role",)) -> list[dict[str, Any]]:
    """Billed totals (cache hits counted apart) grouped by record fields such as role, stage, round."""
    rows: dict[tuple[Any, ...], CostRow] = {}
    for record in records:
        key = tuple(record.get(name, "") for name in by)
        rows.setdefault(key, CostRow(key=key)).add_record(record)
    return [rows[key].as_dict(by) for key in sorted(rows, key=lambda k: tuple(str(p) for p in k))]


def per_unit(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Cost attributed to each knowledge unit: a call's tokens and dollars split evenly over its units."""
    totals: dict[str, dict[str, float]] = defaultdict(
        lambda: {"calls": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0, "cost_usd": 0.0}
    )
    for record in records:
        units = record.get("unit_ids") or []
        if record.get("cache_hit") or not units:
            continue
        share = 1.0 / len(units)
        for unit in units:
            entry = totals[unit]
            entry["calls"] += share
            entry["prompt_tokens"] += share * int(record.get("prompt_tokens", 0))
            entry["completion_tokens"] += share * int(record.get("completion_tokens", 0))
            entry["cost_usd"] += share * float(record.get("cost_usd", 0.0))
    return dict(totals)
