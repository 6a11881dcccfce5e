"""Provider batch mode: an endpoint's calls submitted together through the OpenAI Files and Batches APIs.

A call to an endpoint with `batch: true` passes the gateway's cache, budget and write-ahead ledger as
any call does; then, instead of being sent, its request is queued in the endpoint's `BatchCollector`.
The calls a step makes arrive together, so the collector submits what it holds once no call has been
queued for `batch_quiet_seconds` (or at once at `batch_max_requests`): one JSONL file, one line per
request, `custom_id` = the request's cache key, uploaded with `files.create(purpose="batch")` and
submitted with `batches.create(endpoint="/v1/chat/completions")`.

The batch id and its custom ids are saved in the run directory (batches.json) before the first status
check. A run killed while it waits and then resumed finds its calls' keys there and waits on the same
batch instead of submitting them again: nothing is paid twice. (Only a kill in the instant between the
provider's answer to `batches.create` and that local file write loses a batch id.)

Status checks back off from `batch_poll_seconds` by 1.5x per check up to `batch_poll_max_seconds`. When
the batch ends, each output line is handed back to its call, which goes on through the same reply
parsing, structured-output checks, cache and ledger as an ordinary reply (priced at the batch rate,
marked `batch`). A request the batch did not answer (its line has an error, or the batch expired,
failed or was cancelled before reaching it, or could not be submitted) raises `BatchMiss`: the gateway
sends it as an ordinary call, priced at the standard rate.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from examiner.core.config import EndpointSpec
from examiner.core.ledger_record import LedgerRecord
from examiner.core.rundir import RunDir, SubmittedBatch
from examiner.llm.call import CallMeta
from examiner.llm.ledger import in_flight
from examiner.llm.reply import ChatReply
from examiner.llm.slots import parked
from examiner.llm.transport import ChatRequest, Endpoint
from examiner.llm.types import Attempt

log = logging.getLogger(__name__)

T = TypeVar("T")

CHAT_URL: Final = "/v1/chat/completions"
ENDED = ("completed", "expired", "failed", "cancelled")
"""Batch statuses after which nothing more will be answered."""
POLL_GROWTH = 1.5
TRANSIENT = (openai.RateLimitError, openai.APIConnectionError, openai.InternalServerError)
"""Failures of a Files/Batches request worth trying again."""


class BatchMiss(Exception):
    """A request a batch did not answer; the gateway sends it as an ordinary call instead."""


class BatchBook:
    """The run's submitted batches: loaded from the run directory at start, saved as each is submitted."""

    def __init__(self, run_dir: RunDir | None) -> None:
        self._run = run_dir
        self._batches: list[SubmittedBatch] = run_dir.read_batches() if run_dir is not None else []
        self._by_key = {key: b.id for b in self._batches for key in b.custom_ids}

    def batch_of(self, key: str) -> str | None:
        """The id of the saved batch that holds request `key`, if any."""
        return self._by_key.get(key)

    def add(self, batch: SubmittedBatch) -> None:
        """Record a submitted batch, on disk before anything waits for it."""
        self._batches.append(batch)
        self._by_key.update((key, batch.id) for key in batch.custom_ids)
        if self._run is not None:
            self._run.write_batches(self._batches)


@dataclass
class BatchResults:
    """What an ended batch answered: a chat completion body per answered custom id, an error per other."""

    status: str
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def answer(self, key: str, batch_id: str) -> dict[str, Any]:
        """The reply body for `key`; BatchMiss when the batch has none."""
        if key in self.answers:
            return self.answers[key]
        reason = self.errors.get(key) or f"no output line (batch {self.status})"
        raise BatchMiss(f"batch {batch_id}: {reason}")


def parse_result_lines(text: str, results: BatchResults) -> None:
    """Add the lines of an output or error file: {custom_id, response: {status_code, body}, error}. A line
    that is not a JSON object is skipped: its request, left unanswered, is sent as an ordinary call."""
    for line in text.splitlines():
        try:
            row = json.loads(line) if line.strip() else None
        except ValueError:
            row = None
        if not isinstance(row, dict):
            if line.strip():
                log.warning("a batch result line is not a JSON object (starts %r); skipped", line[:60])
            continue
        key = str(row.get("custom_id"))
        response = row.get("response") or {}
        body = response.get("body")
        if not row.get("error") and response.get("status_code") == 200 and isinstance(body, dict) \
                and isinstance(body.get("choices"), list) and body["choices"]:
            results.answers[key] = body
            results.errors.pop(key, None)
        elif key not in results.answers:
            error = row.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
            code = error.get("code") if isinstance(error, dict) else None
            message = error.get("message") if isinstance(error, dict) else str(error)
            results.errors[key] = f"HTTP {response.get('status_code', '-')} {code or ''} {message or ''}".strip()


class BatchCollector:
    """Queues one endpoint's batch calls, submits them together and hands each its reply."""

    def __init__(self, name: str, spec: EndpointSpec, client: AsyncOpenAI, book: BatchBook,
                 notes: Callable[[str], None]) -> None:
        self.name = name
        self.spec = spec
        self.client = client
        self.book = book
        self.notes = notes
        self._pending: dict[str, tuple[dict[str, Any], asyncio.Future[str]]] = {}
        self._last_queued = 0.0
        self._timer: asyncio.Task[None] | None = None
        self._collecting: dict[str, asyncio.Task[BatchResults]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    async def answer(self, key: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        """The chat completion (as JSON) a batch gives for request `key`: from the saved batch that holds
        it, else from a new one. `headers` ride along in the line only for the simulated backend, which
        reads role and hints from them. Raises BatchMiss when no batch answers it."""
        async with parked():
            batch_id = self.book.batch_of(key)
            if batch_id is None:
                batch_id = await self._queue(key, body, headers)
            results = await asyncio.shield(self._collect(batch_id))
        return results.answer(key, batch_id)

    async def aclose(self) -> None:
        """Stop waiting (the batches go on at the provider; a resume collects them)."""
        for task in [*self._tasks, *self._collecting.values(), *([self._timer] if self._timer else [])]:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._collecting.values(), return_exceptions=True)
        for _, future in self._pending.values():
            future.cancel()

    # ------------------------------------------------------------------ queue and submit
    async def _queue(self, key: str, body: dict[str, Any], headers: dict[str, str] | None) -> str:
        if key in self._pending:  # the same request twice at once (no cache): one line serves both
            return await asyncio.shield(self._pending[key][1])
        line: dict[str, Any] = {"custom_id": key, "method": "POST", "url": CHAT_URL, "body": body}
        if headers:
            line["headers"] = headers
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending[key] = (line, future)
        self._last_queued = time.monotonic()
        if len(self._pending) >= self.spec.batch_max_requests:
            self._spawn(self._submit(self._take()))
        elif self._timer is None or self._timer.done():
            self._timer = asyncio.create_task(self._wait_for_quiet())
        return await asyncio.shield(future)

    def _take(self) -> dict[str, tuple[dict[str, Any], asyncio.Future[str]]]:
        taken, self._pending = self._pending, {}
        return taken

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait_for_quiet(self) -> None:
        """Submit what is queued once no call has been queued for `batch_quiet_seconds`."""
        while self._pending:
            wait = self._last_queued + self.spec.batch_quiet_seconds - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            self._spawn(self._submit(self._take()))

    async def _submit(self, queued: dict[str, tuple[dict[str, Any], asyncio.Future[str]]]) -> None:
        """Upload the queued lines, create the batch, save it, then tell each call its batch id. A batch
        that could not be submitted leaves its calls to ordinary requests; any other error (a bug) is
        handed to every waiting call rather than left to hang them."""
        try:
            batch_id = await self._create(queued)
        except (openai.OpenAIError, OSError) as exc:
            log.warning("endpoint %s: batch of %d calls not submitted (%s); sending them one by one",
                        self.name, len(queued), _short(exc))
            _settle(queued, error=BatchMiss(f"batch not submitted: {_short(exc)}"))
            return
        except Exception as exc:
            _settle(queued, error=exc)
            raise
        self.notes(f"{self.name}: batch {batch_id} submitted ({len(queued)} calls; results within "
                   f"{self.spec.batch_completion_window})")
        _settle(queued, batch_id=batch_id)

    async def _create(self, queued: dict[str, tuple[dict[str, Any], asyncio.Future[str]]]) -> str:
        data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line, _ in queued.values())
        upload = await self._retried(lambda: self.client.files.create(
            file=("examiner-batch.jsonl", data.encode("utf-8"), "application/jsonl"), purpose="batch"))
        batch = await self._retried(lambda: self.client.batches.create(
            input_file_id=upload.id, endpoint=CHAT_URL, completion_window=self.spec.batch_completion_window))
        try:
            self.book.add(SubmittedBatch(id=batch.id, endpoint=self.name, input_file_id=upload.id,
                                         custom_ids=list(queued), created=time.time()))
        except OSError as exc:  # the batch exists and is paid: wait for it all the same
            log.warning("endpoint %s: batch %s not saved in the run directory (%s); a resume after a kill "
                        "would submit its calls again", self.name, batch.id, _short(exc))
        return batch.id

    # ------------------------------------------------------------------ poll and collect
    def _collect(self, batch_id: str) -> asyncio.Task[BatchResults]:
        """The one task that waits for batch `batch_id` and reads its results (shared by its calls)."""
        if batch_id not in self._collecting:
            self._collecting[batch_id] = asyncio.create_task(self._poll(batch_id))
        return self._collecting[batch_id]

    async def _poll(self, batch_id: str) -> BatchResults:
        interval = self.spec.batch_poll_seconds
        shown = ""
        while True:
            try:
                batch = await self.client.batches.retrieve(batch_id)
            except TRANSIENT as exc:  # the batch runs on at the provider: check again later
                log.info("endpoint %s: status of batch %s not read (%s); checking again", self.name, batch_id,
                         _short(exc))
                await asyncio.sleep(interval)
                continue
            except openai.OpenAIError as exc:  # e.g. a batch id the provider does not know
                log.warning("endpoint %s: batch %s cannot be read (%s); its calls are sent one by one",
                            self.name, batch_id, _short(exc))
                return BatchResults(status="unreadable")
            counts = batch.request_counts
            progress = f"{batch.status}" + (f", {counts.completed + counts.failed}/{counts.total} done" if counts else "")
            if progress != shown:
                self.notes(f"{self.name}: batch {batch_id} {progress}")
                shown = progress
            if batch.status in ENDED:
                break
            await asyncio.sleep(interval)
            interval = min(interval * POLL_GROWTH, self.spec.batch_poll_max_seconds)
        results = BatchResults(status=batch.status)
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                try:
                    content = await self._retried(partial(self.client.files.content, file_id))
                except openai.OpenAIError as exc:  # its requests stay unanswered: sent one by one
                    log.warning("endpoint %s: file %s of batch %s cannot be read (%s)", self.name, file_id,
                                batch_id, _short(exc))
                    continue
                parse_result_lines(content.text, results)
        if results.errors or batch.status != "completed":
            self.notes(f"{self.name}: batch {batch_id} {batch.status}: {len(results.answers)} answered, "
                       f"the others are sent one by one")
        return results

    async def _retried(self, call: Callable[[], Awaitable[T]]) -> T:
        """A Files/Batches request with the endpoint's attempts and back-off for transient failures."""
        for number in range(1, self.spec.max_attempts + 1):
            try:
                return await call()
            except TRANSIENT:
                if number == self.spec.max_attempts:
                    raise
                await asyncio.sleep(random.uniform(0, min(30.0, self.spec.backoff_base_s * 2 ** (number - 1))))
        raise AssertionError("unreachable: the last attempt returns or raises")


class BatchLane:
    """A gateway's batch mode: which requests go to a provider batch, their replies, and the adoption of
    the batch calls a killed process left in flight. `records` reads the run's ledger (once, on first
    use); `notes` shows the batches' progress."""

    def __init__(self, run_dir: Path | None, records: Callable[[], list[LedgerRecord]],
                 notes: Callable[[str], None]) -> None:
        self.notes = notes
        self._run_dir = run_dir
        self._records = records
        self._book: BatchBook | None = None
        self._collectors: dict[str, BatchCollector] = {}
        self._orphans: dict[str, LedgerRecord] = {}
        """Cache key -> the `started` record a killed process wrote for a batch call (see `adopt`)."""

    @staticmethod
    def takes(spec: EndpointSpec, request: ChatRequest, meta: CallMeta) -> bool:
        """Whether a request goes to a provider batch. Re-asks after an unusable reply do not: they are
        few, and a second batch round trip (up to the completion window) for them would hold up the
        whole step; nor do n > 1 requests to an endpoint that returns one choice per request."""
        return spec.batch and not meta.repair and (request.n == 1 or spec.supports_n)

    def adopt(self, key: str) -> str | None:
        """The call id of the `started` record a killed process wrote for the same request (which waits in
        the same saved batch), if any: a resumed batch call takes that identity, so the ledger shows one
        request with one outcome."""
        self._batches()
        orphan = self._orphans.pop(key, None)
        return None if orphan is None else orphan.call_id

    async def reply(self, ep: Endpoint, key: str, request: ChatRequest, headers: dict[str, str]) -> ChatReply:
        """The request's reply from a provider batch, marked `batch`; BatchMiss when no batch answers it
        (the caller then sends it as an ordinary request). `headers` (only a simulated endpoint has any)
        ride along in the batch line."""
        if ep.name not in self._collectors:
            self._collectors[ep.name] = BatchCollector(ep.name, ep.spec, ep.client, self._batches(), self.notes)
        began = time.perf_counter()
        body = dict(request.body, model=ep.spec.model, messages=request.messages)
        answer = await self._collectors[ep.name].answer(key, body, headers or None)
        try:
            completion = ChatCompletion.model_validate(answer)
        except ValidationError as exc:
            raise BatchMiss(str(exc)) from None
        attempt = Attempt("ok", time.perf_counter() - began, detail="batch")
        return ChatReply.from_completion(completion, request.messages, [attempt]).model_copy(update={"batch": True})

    async def aclose(self) -> None:
        """Stop waiting for batches (they go on at the provider; a resumed run collects them)."""
        for collector in self._collectors.values():
            await collector.aclose()
        self._collectors.clear()

    def _batches(self) -> BatchBook:
        """The run's submitted batches, and the batch calls a killed process left in flight, read once."""
        if self._book is None:
            self._book = BatchBook(RunDir(self._run_dir) if self._run_dir else None)
            self._orphans = {r.cache_key: r for r in in_flight(self._records()) if r.batch and r.cache_key}
        return self._book


def _settle(queued: dict[str, tuple[dict[str, Any], asyncio.Future[str]]], *, batch_id: str = "",
            error: BaseException | None = None) -> None:
    """Tell each queued call its batch id, or the error that stops it."""
    for _, future in queued.values():
        if future.done():
            continue
        if error is not None:
            future.set_exception(error)
            future.exception()  # mark retrieved: each waiter re-raises it itself
        else:
            future.set_result(batch_id)


def _short(exc: BaseException) -> str:
    """An error's first line, short enough for a log line."""
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


__all__ = ["BatchBook", "BatchCollector", "BatchLane", "BatchMiss", "BatchResults", "parse_result_lines"]
