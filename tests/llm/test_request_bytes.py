"""The transport hands the SDK a request's fields as `extra_body` (examiner.llm.transport.ChatRequest.json_fields),
so the SDK skips its per-call walk of them: a server must still get the bytes the SDK's own `create` sends,
since the simulator's fault draws (and any server's own hashing) depend on them."""

from __future__ import annotations

from typing import Any

import httpx2
from openai import AsyncOpenAI
from pydantic import BaseModel

from examiner.llm.structured import response_format
from examiner.llm.transport import ChatRequest

REPLY = {"id": "c-1", "object": "chat.completion", "created": 0, "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class Labels(BaseModel):
    labels: dict[str, str]
    reason: str = ""


async def sent_bytes(send: Any) -> bytes:
    """The body of the one request `send(client)` makes."""
    bodies: list[bytes] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        bodies.append(request.content)
        return httpx2.Response(200, json=REPLY)

    client = AsyncOpenAI(base_url="http://server.test/v1", api_key="k",
                         http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer)))
    async with client:
        await send(client)
    assert len(bodies) == 1
    return bodies[0]


async def test_a_request_sent_as_extra_body_has_the_bytes_of_the_sdks_own() -> None:
    messages = [{"role": "system", "content": "Judge each unit."}, {"role": "user", "content": "U1: café\nU2: ẞ 𝛼"}]
    bodies = [
        {"max_tokens": 300, "temperature": 0.0, "seed": 7, "n": 1},
        {"temperature": 0.2, "max_tokens": 50, "n": 3, "seed": 1, "stop": ["\n\n"], "logprobs": True, "top_logprobs": 5,
         "response_format": response_format(Labels, "json_schema")},
        {"n": 1, "max_tokens": 20, "temperature": 1.0, "response_format": {"type": "json_object"}},
    ]
    for body in bodies:
        request = ChatRequest(messages, body)
        sdk = await sent_bytes(lambda c, body=body: c.chat.completions.with_raw_response.create(
            model="m", messages=messages, **body))
        ours = await sent_bytes(lambda c, request=request: c.chat.completions.with_raw_response.create(
            model="m", messages=[], extra_body=request.json_fields()))
        assert ours == sdk, body
