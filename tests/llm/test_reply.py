"""The typed reply: parsed once from a chat completion, stored in and read back from the response cache."""

from __future__ import annotations

from openai.types.chat import ChatCompletion

from examiner.llm.reply import ChatReply
from examiner.llm.types import Attempt, TokenLogprob

MESSAGES = [{"role": "user", "content": "What is two and two?"}]


def completion(**usage: object) -> ChatCompletion:
    body: dict[str, object] = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "served-model",
        "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "Four"},
                     "logprobs": {"content": [{"token": "Four", "logprob": -0.1, "bytes": None,
                                               "top_logprobs": [{"token": "Four", "logprob": -0.1, "bytes": None},
                                                                {"token": "4", "logprob": -2.5, "bytes": None}]}]}},
                    {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": None}}],
    }
    if usage:
        body["usage"] = usage
    return ChatCompletion.model_validate(body)


def test_a_completion_is_parsed_with_its_usage_details() -> None:
    usage = {"prompt_tokens": 2000, "completion_tokens": 300, "total_tokens": 2300,
             "prompt_tokens_details": {"cached_tokens": 1536}, "completion_tokens_details": {"reasoning_tokens": 120}}
    reply = ChatReply.from_completion(completion(**usage), MESSAGES, [Attempt("ok", 0.5)], "req-9")
    assert reply.texts == ["Four", ""] and reply.finish_reason == "length" and reply.model == "served-model"
    assert reply.token_counts() == {"prompt_tokens": 2000, "cached_tokens": 1536, "cache_write_tokens": 0,
                                    "completion_tokens": 300, "reasoning_tokens": 120}
    assert reply.usage_source == "api" and reply.request_id == "req-9"
    result = reply.result(endpoint="e", model="m", hit=False, latency_s=0.5)
    assert result.logprobs == [TokenLogprob("Four", -0.1, {"Four": -0.1, "4": -2.5})]
    assert result.attempts == [Attempt("ok", 0.5)] and result.cached_tokens == 1536


def test_without_reported_usage_the_tokens_are_counted() -> None:
    reply = ChatReply.from_completion(completion(), MESSAGES, [])
    assert reply.usage_source == "tiktoken" and reply.prompt_tokens > 0 and reply.completion_tokens == 1
    assert reply.request_id == "chatcmpl-1"


def test_a_payload_cached_by_an_earlier_version_still_reads_and_writes_back_alike() -> None:
    """The cache's payload keeps its shape: a reply cached before examiner kept the model or the usage
    details reads back (absent counts are 0) and is written back with the same fields."""
    old = {"texts": ["ok"], "logprobs": [["ok", -0.2, {"ok": -0.2}]], "finish_reason": "stop", "prompt_tokens": 9,
           "completion_tokens": 1, "usage_source": "api", "request_id": "r1",
           "attempts": [{"status": "ok", "latency_s": 0.1, "wait_s": 0.0, "detail": ""}], "replica": "http://b/v1"}
    reply = ChatReply.from_payload(old)
    assert reply.cached_tokens == 0 and reply.replica == "http://b/v1" and not reply.batch
    again = reply.to_payload()
    assert {k: again[k] for k in old} == old
    assert ChatReply.from_payload(again) == reply
    assert "batch" not in again and ChatReply.from_payload(dict(again, batch=True)).to_payload()["batch"] is True


def test_a_fan_out_merges_choices_tokens_and_attempts() -> None:
    parts = [ChatReply(texts=[text], prompt_tokens=10, completion_tokens=n, request_id=f"r{n}",
                       attempts=[Attempt("ok", 0.1)]) for text, n in (("a", 1), ("b", 2), ("c", 3))]
    merged = parts[0].merged(parts[1:])
    assert merged.texts == ["a", "b", "c"] and merged.prompt_tokens == 30 and merged.completion_tokens == 6
    assert len(merged.attempts) == 3 and merged.request_id == "r1"
