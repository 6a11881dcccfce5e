"""The cost ledger: append-only JSONL records of model requests, and the tables built from them.

Write-ahead: a request that is sent is first recorded as `started` (call id, role, stage, endpoint,
model and `worst_case_usd`, the budget's reservation for it); its outcome record follows with the same
call id: `ok`, `failed`, `reconciled` (a resume found its reply in the response cache), `unknown` (a
resume found a call killed in flight whose reply never reached the cache) or `cancelled` (examiner
stopped the call before a reply came, e.g. on Ctrl-C). A request is identified by its call id and repair
number (a re-ask shares the call id of the call it repairs).

Every reader counts a request once: an outcome record wins, and a `started` record without one is a
call *in flight at a kill*, not yet settled: counted at its worst case by `spent_usd` until a resume
settles it. A resume settles every such call (examiner.llm.gateway's `resume_spending`): `reconciled`
when its reply reached the cache, otherwise `unknown`, which keeps its worst case apart. A reply the
server sent but the killed process never received cannot be known from here, so `unknown` calls are
*possibly billed*: `examiner cost` and the report show them on a line of their own with the most they
can have cost, and the budget goes on holding them at that worst case after the resume (`spent_usd`), so
a kill cannot let the provider's bill pass the cap: a resumed run starts from its known dollars plus the
worst cases of the calls killed in flight. `cancelled` calls are shown on a line of their own too.

An attempt that may have been processed although its reply never came to use (a timeout after the
request was sent, a connection lost after sending, an HTTP 200 whose JSON body is cut or unusable) gets a
`lost` record at once (call id, repair, status, `worst_case_usd`): the provider may bill it, and the
request is sent again. It is no outcome of its request. `lost` attempts are possibly billed, and they,
`unknown` calls and `cancelled` calls (stopped by examiner after they were sent) are held at their worst
case against the budget (`spent_usd`), so a reply that came too late, cut or to a killed process cannot
let the provider's bill pass the cap by more than one call's worst case.
An answer whose reported usage is implausible (negative, more completion tokens than max_tokens asked
for, more prompt tokens than the context) is booked at its worst case with `usage_source: implausible`
and the reported counts in `reported_usage`.

Outcome records carry role, stage, round, the knowledge units the call was about, tokens (from the
API's `usage`, or counted with tiktoken when absent), latency, attempts, cache hit and dollars. Every
record's `model` is the configured model (the endpoint's settings); `ok` and `reconciled` records also
carry `reply_model`, the model the server said answered (its reply's `model`), where it named one (left
out when the reply named none, and in ledgers written before it was kept). Cache
hits are kept in the ledger (so a resumed run shows what it reused) but cost nothing and have no
`started` record (nothing is sent).

Tokens are billed as the provider reports them (EndpointSpec.cost_usd says how each part is priced):
`prompt_tokens` includes `cached_tokens` (read from the provider's prompt cache) and `cache_write_tokens`
(written to it), `completion_tokens` includes `reasoning_tokens`; `batch` marks a call answered through
the provider's batch API. A ledger written before these fields existed reads them as 0 and False.
Note the two caches: `cache_hit` is examiner's own response cache (nothing sent, nothing paid);
`cached_tokens` is the provider's prompt cache (sent, and paid at the cached-input price).

A record is an examiner.core.ledger_record.LedgerRecord: examiner writes those, `read_ledger` reads them
back, and the functions below count them, records only (one type at the edges: JSON from elsewhere is
validated once where it is read, with `LedgerRecord.model_validate`); a field a record lacks counts as the
model's default.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Mapping

from examiner.core.jsonl import read_jsonl, repair_tail
from examiner.core.ledger_record import LedgerRecord
from examiner.core.redact import redact_text
from examiner.core.rundir import LEDGER


def read_ledger(path: str | Path) -> list[LedgerRecord]:
    """A ledger file's records in call order ([] when absent; a torn last line, cut by a kill, is left
    out; a damaged line is a CorruptRunFile naming it)."""
    return read_jsonl(path, LedgerRecord.model_validate_json).rows


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

    def append(self, record: LedgerRecord) -> None:
        if self._handle is None:
            return
        fields = record.fields()  # json's own float and key order: the lines examiner always wrote
        line = redact_text(json.dumps(fields, separators=(",", ":"), default=str))  # replica URLs, error details
        with self._lock:
            self._handle.write(line + "\n")
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


LEDGER_TORN = LEDGER + ".torn"
"""Where core.jsonl.repair_tail keeps the ledger's torn last lines."""
STARTED = "started"
"""The write-ahead record of a request about to be sent."""
UNKNOWN = "unknown"
"""The outcome a resume gives a call killed in flight whose reply never reached the cache."""
CANCELLED = "cancelled"
"""The outcome of a call examiner stopped before a reply came (an interrupt)."""
LOST = "lost"
"""A record of one attempt that was sent and may have been billed, whose reply was lost (late, cut or dropped):
not an outcome of its request, which goes on."""
OUTCOMES = ("ok", "failed", "reconciled", UNKNOWN, CANCELLED)
ANSWERED = ("ok", "reconciled")


def request_key(record: LedgerRecord) -> tuple[str, int]:
    """What ties a `started` record to its outcome: call id and repair number."""
    return record.call_id, record.repair


def outcomes(records: Iterable[LedgerRecord]) -> list[LedgerRecord]:
    """The outcome records (one per request that ended, and one per cache hit), without the write-ahead
    `started` records."""
    return [r for r in records if r.outcome in OUTCOMES]


def in_flight(records: Iterable[LedgerRecord]) -> list[LedgerRecord]:
    """`started` records with no outcome record: requests whose outcome is unknown (killed in flight)."""
    rows = list(records)
    settled = {request_key(r) for r in rows if r.outcome in OUTCOMES}
    return [r for r in rows if r.outcome == STARTED and request_key(r) not in settled]


def possibly_billed(records: Iterable[LedgerRecord]) -> list[LedgerRecord]:
    """Requests sent whose reply never came to use, in ledger order: calls killed in flight (settled as
    `unknown` by a resume, or not settled yet: their `started` record) and `lost` attempts. Each carries
    `worst_case_usd`, the most it can have cost. Cancelled calls are counted apart (`cancelled`)."""
    rows = list(records)
    unsettled = {id(r) for r in in_flight(rows)}
    return [r for r in rows if r.outcome in (UNKNOWN, LOST) or id(r) in unsettled]


def possibly_billed_usd(records: Iterable[LedgerRecord]) -> float:
    """The most the requests whose reply never came to use can have cost (their worst cases)."""
    return _worst_cases(possibly_billed(records))


def _worst_cases(records: Iterable[LedgerRecord]) -> float:
    return sum(r.worst_case_usd for r in records)


def lost(records: Iterable[LedgerRecord]) -> list[LedgerRecord]:
    """The `lost` attempts: sent, possibly billed, their reply late, cut or dropped."""
    return [r for r in records if r.outcome == LOST]


def lost_usd(records: Iterable[LedgerRecord]) -> float:
    """The worst cases of the `lost` attempts."""
    return _worst_cases(lost(records))


def cancelled(records: Iterable[LedgerRecord]) -> list[LedgerRecord]:
    """Calls examiner stopped before a reply came (`cancelled` outcomes)."""
    return [r for r in records if r.outcome == CANCELLED]


def cancelled_usd(records: Iterable[LedgerRecord]) -> float:
    """The worst cases of the cancelled calls (what they could have cost, had they been answered)."""
    return _worst_cases(cancelled(records))


def answered(records: Iterable[LedgerRecord]) -> list[LedgerRecord]:
    """The outcome records of requests that got a reply (`ok`, or `reconciled` from the cache); failed
    requests and write-ahead `started` records are left out."""
    return [r for r in records if r.outcome in ANSWERED]


def failed(records: Iterable[LedgerRecord]) -> int:
    """Requests that failed after all their attempts."""
    return sum(1 for r in records if r.outcome == "failed")


def known_usd(records: Iterable[LedgerRecord]) -> float:
    """Dollars of the requests with an outcome (cache hits and failed requests cost nothing)."""
    return sum(r.cost_usd for r in answered(records) if not r.cache_hit)


def reused(earlier: Iterable[LedgerRecord], later: Iterable[LedgerRecord]) -> list[LedgerRecord]:
    """The calls one ledger paid for (`earlier`, e.g. an estimate's pilot) that another (`later`, the run)
    got from a shared response cache: a cache hit carries the request id of the reply it reuses."""
    hits = {r.request_id for r in answered(later) if r.cache_hit and r.request_id}
    return [r for r in answered(earlier) if not r.cache_hit and r.request_id in hits]


def in_flight_usd(records: Iterable[LedgerRecord]) -> float:
    """The most the requests in flight at a kill, not yet settled, can have cost: their worst cases."""
    return _worst_cases(in_flight(records))


def unknown_usd(records: Iterable[LedgerRecord]) -> float:
    """The worst cases of the calls a resume settled `unknown` (killed in flight, reply never cached)."""
    return _worst_cases(r for r in records if r.outcome == UNKNOWN)


def spent_usd(records: Iterable[LedgerRecord]) -> float:
    """What a run has spent of its budget: known dollars plus the worst cases of everything that may have
    been billed unknown to it: the calls killed in flight (settled `unknown` by a resume, or not settled
    yet), the `lost` attempts and the `cancelled` calls. Held for good, since the provider may have billed
    them, so a capped run killed and resumed passes its cap by at most one call's worst case."""
    rows = list(records)  # counted several times: an iterator must not run dry after the first
    return known_usd(rows) + in_flight_usd(rows) + unknown_usd(rows) + lost_usd(rows) + cancelled_usd(rows)


def accounted_usd(records: Iterable[LedgerRecord]) -> float:
    """The most a run's provider can have billed by its ledger: known dollars, the possibly billed worst
    cases and the cancelled calls' worst cases (what `spent_usd` holds against the budget). A provider's
    bill above it is a reply the ledger missed."""
    rows = list(records)
    return known_usd(rows) + possibly_billed_usd(rows) + cancelled_usd(rows)


def torn_lines(run_dir: str | Path, torn_tail: bool = False) -> int:
    """Ledger lines torn by a kill in a run directory: those kept in ledger.jsonl.torn (core.jsonl's
    repair_tail cut them off before an append), plus the ledger's own torn last line when `torn_tail`. Nothing is lost with them: an
    outcome record cut short leaves its request's `started` record standing, counted as in flight, and a
    `started` record cut short belongs to a request that was never sent (it is sent after the write)."""
    kept = Path(run_dir) / LEDGER_TORN
    count = sum(1 for line in kept.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()) \
        if kept.is_file() else 0
    return count + int(torn_tail)


def settlement(records: Iterable[LedgerRecord]) -> dict[str, dict[str, Any]]:
    """How the ledger's sent requests ended, in three parts: billed (answered, with their dollars),
    possibly billed (killed in flight: settled `unknown`, or not yet settled; or `lost` attempts: sent, the
    reply late, cut or dropped; with their worst case) and cancelled in flight (with their worst case)."""
    rows = list(records)
    billed = [r for r in answered(rows) if not r.cache_hit]
    return {
        "billed": {"calls": len(billed), "usd": round(known_usd(rows), 8)},
        "possibly_billed": {"calls": len(possibly_billed(rows)), "worst_case_usd": round(possibly_billed_usd(rows), 8),
                            "unsettled": len(in_flight(rows))},
        "cancelled": {"calls": len(cancelled(rows)), "worst_case_usd": round(cancelled_usd(rows), 8)},
    }


def settlement_lines(figures: Mapping[str, Mapping[str, Any]], torn: int, *, always: bool = True) -> list[str]:
    """`settlement` and the torn ledger lines in words, for `examiner cost` (`always`: all three lines)
    and the report (only the possibly billed and cancelled calls, when there are some)."""
    billed, possibly, stopped = figures["billed"], figures["possibly_billed"], figures["cancelled"]
    lines = [f"billed: {billed['calls']} calls, ${billed['usd']:.6f} (the totals above)"] if always else []
    if always or possibly["calls"]:
        unsettled = possibly.get("unsettled", 0)
        held = f"; {unsettled} killed in flight not settled yet" if unsettled else ""
        lines.append(f"possibly billed (killed in flight, or sent and the reply late, cut or dropped): "
                     f"{possibly['calls']} calls, up to ${possibly['worst_case_usd']:.6f} (reply never used: not "
                     f"in the totals above; held at their worst case against the budget{held})")
    if always or stopped["calls"]:
        lines.append(f"cancelled in flight: {stopped['calls']} calls, up to ${stopped['worst_case_usd']:.6f} "
                     "(stopped by examiner after they were sent: possibly billed, held against the budget; not "
                     "in the totals above)")
    if torn:
        lines.append(f"torn ledger lines: {torn} (cut by a kill, kept in {LEDGER_TORN}; their calls count as "
                     "killed in flight unless a resume reconciled them)")
    return lines


TOKEN_FIELDS = ("prompt_tokens", "cached_tokens", "cache_write_tokens", "completion_tokens", "reasoning_tokens")
"""The token counts of an outcome record; the details (cached, cache write, reasoning) are parts of the
totals (prompt, completion) and read as 0 from a record written before examiner recorded them."""


def tokens_of(record: LedgerRecord) -> dict[str, int]:
    """The token counts of a record, 0 for those it does not carry."""
    return record.token_counts


BILLED_PARTS = ("input", "cached", "write", "output", "reasoning")
"""The disjoint parts of a call's tokens that a provider prices apart (see EndpointSpec.cost_usd)."""


def billed_parts(counts: Mapping[str, float]) -> dict[str, float]:
    """Token counts (TOKEN_FIELDS; absent ones 0) split into BILLED_PARTS: uncached input, cached input,
    cache writes, visible output and hidden reasoning, which add up to prompt + completion tokens."""
    prompt, cached, write, completion, reasoning = (counts.get(name, 0) or 0 for name in TOKEN_FIELDS)
    return {"input": prompt - cached - write, "cached": cached, "write": write, "output": completion - reasoning,
            "reasoning": reasoning}


PART_HEADERS = {"input": "input", "cached": "cached", "write": "write", "output": "output", "reasoning": "reason"}
"""Short column headers of the billed parts, for narrow tables."""
OPTIONAL_PARTS = {"write": "cache_write_tokens", "reasoning": "reasoning_tokens"}
"""Billed parts only some providers and models report: shown where a row has some, to keep tables narrow."""


def shown_parts(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The billed parts a cost table shows: input, cached and output always; cache writes and reasoning
    where some row has them."""
    rows = list(rows)
    return [part for part in BILLED_PARTS
            if part not in OPTIONAL_PARTS or any(row.get(OPTIONAL_PARTS[part]) for row in rows)]


@dataclass
class Usage:
    """Calls, tokens and dollars; cache hits are counted apart and add nothing else (they cost nothing).

    One type for the gateway's running totals and the ledger's cost tables, so both count alike. The
    token details are parts of their totals (see TOKEN_FIELDS); `batch_calls` and `batch_usd` are the
    part of `calls` and `cost_usd` answered through a provider's batch API.
    """

    calls: int = 0
    batch_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    batch_usd: float = 0.0

    def add_record(self, record: LedgerRecord) -> None:
        """Count one answered request from its outcome record (a field it lacks counts as 0 / False)."""
        if record.cache_hit:
            self.cache_hits += 1
            return
        dollars = record.cost_usd
        self.calls += 1
        self.cost_usd += dollars
        if record.batch:
            self.batch_calls += 1
            self.batch_usd += dollars
        for name, count in tokens_of(record).items():
            setattr(self, name, getattr(self, name) + count)

    @property
    def cached_input_share(self) -> float | None:
        """Share (0-1) of the billed prompt tokens read from the provider's prompt cache (None: no prompt
        tokens)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None

    def counters(self) -> dict[str, Any]:
        """The counters as a mapping, in field order, then the derived splits."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(Usage)}
        parts = billed_parts(out)
        out.update(uncached_input_tokens=parts["input"], output_tokens=parts["output"],
                   cached_input_share=self.cached_input_share)
        return out


@dataclass
class CostRow(Usage):
    """Totals for one group of ledger records."""

    key: tuple[Any, ...] = ()
    unit_ids: set[str] = field(default_factory=set)

    def add_record(self, record: LedgerRecord) -> None:
        super().add_record(record)
        self.unit_ids.update(record.unit_ids)

    def as_dict(self, names: tuple[str, ...]) -> dict[str, Any]:
        row = dict(zip(names, self.key))
        row.update(self.counters(), cost_usd=round(self.cost_usd, 8), batch_usd=round(self.batch_usd, 8),
                   units=len(self.unit_ids))
        return row


def field_of(record: LedgerRecord, name: str) -> Any:
    """A record's field for grouping, as plain JSON (a stage as its name); one an older ledger lacks reads
    as the model's default, and a name no record has reads as ''."""
    value = getattr(record, name, "")
    return value.value if isinstance(value, Enum) else value


def aggregate(records: Iterable[LedgerRecord], by: tuple[str, ...] = ("role",)) -> list[dict[str, Any]]:
    """Billed totals (cache hits counted apart) grouped by record fields such as role, stage, round, endpoint
    or batch (True for calls answered through a provider's batch API)."""
    rows: dict[tuple[Any, ...], CostRow] = {}
    for record in records:
        key = tuple(field_of(record, name) for name in by)
        rows.setdefault(key, CostRow(key=key)).add_record(record)
    return [rows[key].as_dict(by) for key in sorted(rows, key=lambda k: tuple(str(p) for p in k))]


def cached_input_share(records: Iterable[LedgerRecord]) -> float | None:
    """Share (0-1) of the billed prompt tokens that the provider served from its prompt cache: cached input
    tokens / prompt tokens over the answered, billed requests (None when there are none)."""
    usage = Usage()
    for record in answered(records):
        usage.add_record(record)
    return usage.cached_input_share


PER_UNIT_FIELDS = ("calls", *TOKEN_FIELDS, "cost_usd")


def per_unit(records: Iterable[LedgerRecord]) -> dict[str, dict[str, float]]:
    """Cost attributed to each knowledge unit: a call's tokens and dollars split evenly over its units."""
    totals: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(PER_UNIT_FIELDS, 0.0))
    for record in records:
        units = record.unit_ids
        if record.cache_hit or not units:
            continue
        share = 1.0 / len(units)
        amounts = {"calls": 1.0, **tokens_of(record), "cost_usd": record.cost_usd}
        for unit in units:
            entry = totals[unit]
            for name, amount in amounts.items():
                entry[name] += share * amount
    return dict(totals)
