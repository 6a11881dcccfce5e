"""The simulated Files and Batches APIs, so provider batch mode is tested offline.

Routes (as OpenAI's): POST /v1/files (multipart: `purpose=batch` and `file`), GET /v1/files/{id}/content,
POST /v1/batches ({input_file_id, endpoint, completion_window}) and GET /v1/batches/{id}. Each input line
{custom_id, method, url, body} is answered by the server's own chat-completion logic; a line may carry a
`headers` object (role, stage, hints), which examiner adds for this backend only. Output and error files
hold lines {id, custom_id, response: {status_code, request_id, body}, error}.

Options of a simulated endpoint (EndpointSpec.options):
- `batch_delay_s`: a batch ends no sooner than this many seconds after it was created (default 0);
- `batch_polls`: ... and not before this many status checks have seen it running (default 0);
- `batch_faults`: per-request errors and expiry (simulator/faults.py, BATCH_FAULT_KINDS);
- `batch_store`: a folder that keeps the files and batches, so they outlive the server. An examiner
  process killed while it waits takes its in-process simulated server with it, while a provider's
  batch runs on; with a store, the resumed process's server finds the batch again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from examiner.simulator.faults import BatchFaultPlan

BATCH_OPTION_NAMES = ("batch_delay_s", "batch_polls", "batch_faults", "batch_store")
CHAT_URL = "/v1/chat/completions"

Answer = Callable[[bytes, Mapping[str, str]], Awaitable[tuple[int, dict[str, Any], Mapping[str, str] | None]]]
"""The server's chat completion logic: (request body, headers) -> (status, JSON body, extra headers)."""


class SimBatches:
    """Uploaded files and batches (in memory, and in `batch_store` when set), with the batch options."""

    def __init__(self, options: Mapping[str, Any], seed: int) -> None:
        self.delay_s = float(options.get("batch_delay_s", 0.0) or 0.0)
        self.polls = int(options.get("batch_polls", 0) or 0)
        self.faults = BatchFaultPlan(options, seed)
        store = options.get("batch_store")
        self.store = Path(store) if store else None
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        """Ids of the batches this server created, in order."""
        self._lock = asyncio.Lock()

    def stats(self) -> dict[str, Any]:
        return {"created": len(self.created), "ids": list(self.created)}

    # ------------------------------------------------------------------ storage
    def _path(self, kind: str, name: str) -> Path | None:
        return self.store / kind / name if self.store is not None else None

    def add_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        meta = {"id": f"file-{uuid.uuid4().hex[:24]}", "object": "file", "bytes": len(data),
                "created_at": int(time.time()), "filename": filename, "purpose": purpose, "status": "processed"}
        self.files[meta["id"]] = (meta, data)
        if (path := self._path("files", meta["id"])) is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, data)
            _write_atomic(path.with_suffix(".json"), json.dumps(meta).encode("utf-8"))
        return meta

    def file(self, file_id: str) -> tuple[dict[str, Any], bytes] | None:
        if file_id not in self.files and (path := self._path("files", file_id)) is not None and path.is_file():
            self.files[file_id] = (json.loads(path.with_suffix(".json").read_text(encoding="utf-8")), path.read_bytes())
        return self.files.get(file_id)

    def save_batch(self, batch: dict[str, Any]) -> None:
        self.batches[batch["id"]] = batch
        if (path := self._path("batches", f"{batch['id']}.json")) is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, json.dumps(batch).encode("utf-8"))

    def batch(self, batch_id: str) -> dict[str, Any] | None:
        if batch_id not in self.batches and (path := self._path("batches", f"{batch_id}.json")) is not None \
                and path.is_file():
            self.batches[batch_id] = json.loads(path.read_text(encoding="utf-8"))
        return self.batches.get(batch_id)

    # ------------------------------------------------------------------ running a batch
    async def advance(self, batch: dict[str, Any], answer: Answer) -> None:
        """One status check: a running batch that is due is run now, its output written."""
        if batch["status"] not in ("validating", "in_progress"):
            return
        batch["_polls"] += 1
        if time.time() < batch["_due"] or batch["_polls"] <= self.polls:
            batch["status"] = "in_progress"
            batch["in_progress_at"] = batch["in_progress_at"] or int(time.time())
            self.save_batch(batch)
            return
        lines = [json.loads(line) for line in self.file(batch["input_file_id"])[1].decode("utf-8").splitlines()  # type: ignore[index]
                 if line.strip()]
        expired = self.faults.expires(batch["_input_key"])
        answered, failed = [], []
        for number, line in enumerate(lines):
            custom_id = str(line.get("custom_id"))
            row: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": custom_id,
                                   "response": None, "error": None}
            if expired and number >= len(lines) // 2:
                row["error"] = {"code": "batch_expired",
                                "message": "This request could not be executed before the completion window expired."}
            elif self.faults.line_fails(custom_id):
                row["response"] = {"status_code": 500, "request_id": uuid.uuid4().hex,
                                   "body": {"error": {"message": "simulated batch request error", "type": "server_error"}}}
            else:
                raw = json.dumps(line.get("body"), separators=(",", ":")).encode("utf-8")
                status, body, _ = await answer(raw, {str(k): str(v) for k, v in (line.get("headers") or {}).items()})
                row["response"] = {"status_code": status, "request_id": uuid.uuid4().hex, "body": body}
            (answered if row["response"] and row["response"]["status_code"] == 200 else failed).append(row)
        now = int(time.time())
        for key, rows in (("output_file_id", answered), ("error_file_id", failed)):
            if rows:
                data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
                batch[key] = self.add_file(data, f"{batch['id']}_{key[:-8]}.jsonl", "batch_output")["id"]
        batch.update(status="expired" if expired else "completed", finalizing_at=now,
                     **({"expired_at": now} if expired else {"completed_at": now}),
                     request_counts={"total": len(lines), "completed": len(answered), "failed": len(failed)})
        self.save_batch(batch)


def public(batch: Mapping[str, Any]) -> dict[str, Any]:
    """A batch as the API shows it (without the simulator's own bookkeeping fields)."""
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def add_batch_routes(app: web.Application, batches: SimBatches, answer: Answer) -> None:
    """Mount the Files and Batches routes over `batches`; `answer` answers each request line."""

    async def upload(request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return _error(400, "expected multipart fields purpose=batch and file")
        return _json(200, batches.add_file(upload.file.read(), upload.filename, "batch"))

    async def content(request: web.Request) -> web.Response:
        found = batches.file(request.match_info["file_id"])
        if found is None:
            return _error(404, f"no such file: {request.match_info['file_id']}")
        return web.Response(body=found[1], content_type="application/octet-stream")

    async def create(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
            found = batches.file(str(body.get("input_file_id")))
            if found is None:
                raise ValueError(f"no such file: {body.get('input_file_id')}")
            if body.get("endpoint") != CHAT_URL or body.get("completion_window") != "24h":
                raise ValueError(f"endpoint must be {CHAT_URL} and completion_window 24h")
            lines = [json.loads(line) for line in found[1].decode("utf-8").splitlines() if line.strip()]
            if not lines or any(line.get("url") != CHAT_URL or "custom_id" not in line for line in lines):
                raise ValueError(f"every input line needs a custom_id and url {CHAT_URL}")
        except (ValueError, AttributeError) as exc:
            return _error(400, f"invalid batch: {exc}")
        now = time.time()
        batch = {"id": f"batch_{uuid.uuid4().hex[:24]}", "object": "batch", "endpoint": CHAT_URL,
                 "input_file_id": found[0]["id"], "completion_window": "24h", "status": "validating",
                 "created_at": int(now), "expires_at": int(now) + 86_400, "in_progress_at": None,
                 "output_file_id": None, "error_file_id": None, "metadata": body.get("metadata"),
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                 "_due": now + batches.delay_s, "_polls": 0,
                 "_input_key": hashlib.blake2b(found[1], digest_size=12).hexdigest()}
        batches.save_batch(batch)
        batches.created.append(batch["id"])
        return _json(200, public(batch))

    async def retrieve(request: web.Request) -> web.Response:
        async with batches._lock:  # a status check may run the batch: one at a time
            batch = batches.batch(request.match_info["batch_id"])
            if batch is None:
                return _error(404, f"no such batch: {request.match_info['batch_id']}")
            await batches.advance(batch, answer)
        return _json(200, public(batch))

    app.router.add_post("/v1/files", upload)
    app.router.add_get("/v1/files/{file_id}/content", content)
    app.router.add_post("/v1/batches", create)
    app.router.add_get("/v1/batches/{batch_id}", retrieve)


def _json(status: int, body: Any) -> web.Response:
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")


def _error(status: int, message: str) -> web.Response:
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return _json(status, {"error": {"message": message, "type": kind, "param": None, "code": kind}})


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace a file whole, so a kill leaves the old content or the new, never half."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


__all__ = ["BATCH_OPTION_NAMES", "SimBatches", "add_batch_routes", "public"]
