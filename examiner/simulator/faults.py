"""Fault injection: which request fails and how, decided deterministically.

The decision is a hash of (seed, request body, how many times this exact body has been seen), so a
retry of the same body draws again (and eventually succeeds) while the whole sequence repeats from run
to run. Fault kinds, in the order their rates are stacked on [0, 1):

- `rate_limit`: HTTP 429 with `Retry-After` (seconds) and `retry-after-ms` headers;
- `server_error`: HTTP 500;
- `timeout`: the answer comes only after `timeout_sleep_s` seconds (set it above the client timeout);
- `malformed_json`: JSON content made invalid (prose around it, single quotes, or a trailing comma);
- `truncated_json`: JSON content cut mid-object (finish_reason "length");
- `empty_choices`: HTTP 200 with `choices: []`.

The two JSON faults apply only to requests that ask for JSON (response_format); for other requests the
draw is a success.

A re-ask after an unusable reply extends the conversation with that reply and a correction, and says so
in the `repair` hint (how many such turn pairs end the conversation). `original_request` drops them, so
the simulated model answers a re-ask as it would have answered the first request: at temperature 0 a
fault then changes no outcome, only the number of requests.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from examiner.simulator.prose import stable_uniform

FAULT_KINDS = ("rate_limit", "server_error", "timeout", "malformed_json", "truncated_json", "empty_choices")
JSON_FAULTS = ("malformed_json", "truncated_json")


def mixed_faults(total: float) -> dict[str, float]:
    """Fault rates summing to `total`, spread evenly over every kind (the `faults` option)."""
    if not 0 <= total <= 1:
        raise ValueError("a total fault rate is between 0 and 1")
    return {kind: total / len(FAULT_KINDS) for kind in FAULT_KINDS}


class FaultPlan:
    """Fault rates from the endpoint options, and the per-request draw."""

    def __init__(self, options: Mapping[str, Any], seed: int) -> None:
        self.rates = _shares(options, "faults", "fault", FAULT_KINDS)
        if any(r < 0 for r in self.rates.values()) or sum(self.rates.values()) > 1 + 1e-9:
            raise ValueError("fault rates must be >= 0 and sum to at most 1")
        self.seed = seed
        self.active = any(r > 0 for r in self.rates.values())
        self.retry_after_s = float(options.get("retry_after_s", 0.05))
        self.timeout_sleep_s = float(options.get("timeout_sleep_s", 5.0))

    def decide(self, body_key: str, seen: int) -> str | None:
        """The fault for the `seen`-th arrival of the body with hash `body_key`, or None."""
        if not self.active:
            return None
        u = stable_uniform(self.seed, "fault", body_key, seen)
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += self.rates[kind]
            if u < edge:
                return kind
        return None


def _shares(options: Mapping[str, Any], option: str, what: str, kinds: tuple[str, ...]) -> dict[str, float]:
    """kind -> share from the option `option` (a mapping; missing kinds are 0); ValueError naming an
    unknown kind."""
    given = dict(options.get(option) or {})
    unknown = set(given) - set(kinds)
    if unknown:
        raise ValueError(f"unknown {what} kind(s) {sorted(unknown)} (known: {', '.join(kinds)})")
    return {kind: float(given.get(kind, 0.0)) for kind in kinds}


def malform_json(content: str, rng: random.Random) -> str:
    """Invalid JSON of the kinds models produce: chatty prose around it, single quotes, trailing comma."""
    style = rng.randrange(3)
    if style == 0:
        return f"Sure! Here is the JSON you asked for:\n{content}\nLet me know if you need anything else."
    if style == 1 and '"' in content:
        return content.replace('"', "'")
    stripped = content.rstrip()
    if stripped.endswith("}") or stripped.endswith("]"):
        return stripped[:-1].rstrip() + "," + stripped[-1]
    return content + ","


def truncate_json(content: str, rng: random.Random) -> str:
    """`content` cut somewhere between 30 % and 90 % of its length (always leaving it unclosed)."""
    if len(content) < 4:
        return content[:1] if content else "{"
    cut = max(1, min(len(content) - 1, int(len(content) * rng.uniform(0.3, 0.9))))
    return content[:cut]


def original_request(body: dict[str, Any], hints: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(body, hints) of the first request of a re-ask: the `repair` hint removed and, when the
    conversation ends in that many (assistant reply, user correction) pairs, those pairs dropped.
    A request without the hint is returned as it came."""
    repairs = hints.get("repair")
    if not isinstance(repairs, int) or isinstance(repairs, bool) or repairs <= 0:
        return body, dict(hints)
    rest = {k: v for k, v in hints.items() if k != "repair"}
    messages = body["messages"]
    failed = messages[len(messages) - 2 * repairs:]
    roles = [m.get("role") if isinstance(m, dict) else None for m in failed]
    if len(messages) <= 2 * repairs or roles != ["assistant", "user"] * repairs:
        return body, rest
    return dict(body, messages=messages[: len(messages) - 2 * repairs]), rest


BATCH_FAULT_KINDS = ("line_error", "expired")
"""Faults of the simulated Batch API (the `batch_faults` option, kind -> share):

- `line_error`: the share of a batch's requests answered with an error line (HTTP 500, in the batch's
  error file) instead of a reply, drawn per request (its custom_id);
- `expired`: the share of batches that end `expired`, drawn per batch (its input file): the first half
  of their lines are answered, the rest are in the error file with code `batch_expired`, as with a
  provider batch that ran out of its completion window."""


class BatchFaultPlan:
    """Batch fault shares from the endpoint options, and the per-request and per-batch draws."""

    def __init__(self, options: Mapping[str, Any], seed: int) -> None:
        self.rates = _shares(options, "batch_faults", "batch fault", BATCH_FAULT_KINDS)
        if any(not 0 <= r <= 1 for r in self.rates.values()):
            raise ValueError("batch fault shares must be between 0 and 1")
        self.seed = seed

    def line_fails(self, custom_id: str) -> bool:
        """Whether the request `custom_id` gets an error line instead of a reply."""
        return stable_uniform(self.seed, "batch-line", custom_id) < self.rates["line_error"]

    def expires(self, input_key: str) -> bool:
        """Whether the batch over the input file with hash `input_key` expires before it ends."""
        return stable_uniform(self.seed, "batch-expired", input_key) < self.rates["expired"]
