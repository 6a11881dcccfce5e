"""A chat-completions server on 127.0.0.1 that bills every reply it makes, and sends some of them badly.

What a provider does to a client whose replies go wrong: it bills the reply it produced whether or not the
client used it. Kinds of reply (`KINDS`), drawn per arriving request by `plan`:
- `ok`: a chat completion with its true usage;
- `late`: the same, sent only after `late_s` (past the client's timeout);
- `cut`: HTTP 200 with the completion's JSON body cut short;
- `drop`: the connection closed once the request was read (the model ran: billed);
- `negative`, `huge`: a good completion whose usage says -10^6 prompt tokens, or 10^9 completion tokens;
- `drip`: the completion's body sent `drip_bytes` bytes every `drip_every_s` seconds.

The true usage is the prompt counted as examiner counts it (examiner.core.tokens) and `completion_tokens`;
`billed` holds (reply id, dollars) of every reply made, `drip_sent` how many body bytes the dripping
replies got out before the client hung up. Raw asyncio streams, so the server can cut, drop and drip.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from examiner.core.errors import BudgetExhausted
from examiner.core.tokens import count_message_tokens
from examiner.llm import Gateway, GenerationConfig, ModelCallError

KINDS = ("ok", "late", "cut", "drop", "negative", "huge", "drip")


def mixed(shares: dict[str, float], seed: int = 0) -> Callable[[int], str]:
    """A plan drawing each request's kind from `shares` (the rest `ok`), seeded."""
    rng = random.Random(seed)

    def plan(_number: int) -> str:
        u, edge = rng.random(), 0.0
        for kind, share in shares.items():
            edge += share
            if u < edge:
                return kind
        return "ok"

    return plan


@dataclass
class BillingServer:
    plan: Callable[[int], str]
    price_input_per_1m: float
    price_output_per_1m: float
    completion_tokens: int = 12
    late_s: float = 1.5
    drip_bytes: int = 1
    drip_every_s: float = 0.05
    model: str = "billing"
    """The model each reply names ('' names none)."""
    billed: list[tuple[str, float]] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    drip_sent: list[int] = field(default_factory=list)
    body_bytes: list[int] = field(default_factory=list)
    pending: int = 0
    _server: asyncio.base_events.Server | None = None
    _arrivals: int = 0

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def stop(self) -> None:
        await self.settled()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def settled(self) -> None:
        """Wait until every reply in the making has been made (and billed)."""
        while self.pending:
            await asyncio.sleep(0.05)

    @property
    def billed_usd(self) -> float:
        return sum(usd for _, usd in self.billed)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.pending += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            request = json.loads(await reader.readexactly(length))
            await self._reply(request, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.pending -= 1
            writer.close()

    async def _reply(self, request: dict[str, Any], reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        self._arrivals += 1
        kind = self.plan(self._arrivals)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        prompt = count_message_tokens(request["messages"])
        completion = min(self.completion_tokens, int(request.get("max_tokens") or self.completion_tokens))
        reply_id = f"srv-{self._arrivals}"
        self.billed.append((reply_id, (prompt * self.price_input_per_1m + completion * self.price_output_per_1m) / 1e6))
        if kind == "drop":
            return
        if kind == "late":
            await asyncio.sleep(self.late_s)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        if kind == "negative":
            usage = dict(usage, prompt_tokens=-10**6)
        elif kind == "huge":
            usage = dict(usage, completion_tokens=10**9)
        body = json.dumps({"id": reply_id, "object": "chat.completion", "created": 0, "model": self.model,
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": "word " * completion}}],
                           "usage": usage}).encode()
        sent = body[: len(body) // 2] if kind == "cut" else body
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                     + f"content-length: {len(sent)}\r\n\r\n".encode())
        if kind != "drip":
            writer.write(sent)
            await writer.drain()
            return
        self.body_bytes.append(len(sent))
        self.drip_sent.append(0)
        for start in range(0, len(sent), self.drip_bytes):
            writer.write(sent[start:start + self.drip_bytes])
            await writer.drain()
            if reader.at_eof():  # the client hung up
                return
            self.drip_sent[-1] += len(sent[start:start + self.drip_bytes])
            await asyncio.sleep(self.drip_every_s)


def question(i: int) -> list[dict[str, str]]:
    """The i-th of the questions `call_many` asks."""
    return [{"role": "user", "content": f"question number {i}: what does the harbour water hold?"}]


async def call_many(gw: Gateway, count: int, max_tokens: int, role: str = "candidate") -> tuple[int, int, int]:
    """`count` calls at once: how many were answered, failed for good, and refused by the budget."""
    async def one(i: int) -> str:
        try:
            await gw.chat(role, question(i), GenerationConfig(max_tokens=max_tokens))
        except ModelCallError:
            return "failed"
        except BudgetExhausted:
            return "refused"
        return "ok"

    ends = await asyncio.gather(*(one(i) for i in range(count)))
    return ends.count("ok"), ends.count("failed"), ends.count("refused")


__all__ = ["BillingServer", "KINDS", "call_many", "mixed", "question"]
