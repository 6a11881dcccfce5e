"""The encoder judge behind the chat-completions API (`examiner serve-local --model ENCODER_FOLDER`), so a
config endpoint names it like any other judge, e.g. as a pairwise cascade's cheap tier.

Why a chat face on a model that writes nothing: examiner's pairwise judges send their own prompt and parse
a grade line; this server reads the instruction and the two answers back out of that prompt (the tags of
examiner's pairwise prompt) and answers with a grade line that carries the judge's calibrated verdict:
"6 5" when answer 1 is the better (p >= 0.5), else "6 7". With `logprobs`, the second grade's token lists
both alternatives, log p and log(1 - p), and the first grade is certain, so grade_confidence reads
P(first) = p exactly. With a temperature above 0 the verdict is drawn with probability p (seeded by the
request's `seed`), so a cascade reading confidence from samples sees the same p.

Only pairwise prompts are understood: any other prompt (an exam's unit judge) is refused with a 400 that
says so.
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from examiner.llm.encoder_judge import EncoderJudge

TAGS = {name: re.compile(rf"<{name}>\n?(.*?)\n?</{name}>", re.S) for name in ("instruction", "answer_1", "answer_2")}
FLOOR = 1e-6
"""p is kept inside [FLOOR, 1 - FLOOR] so both log-probabilities are finite."""


def read_pair(text: str) -> tuple[str, str, str] | None:
    """(instruction, answer 1, answer 2) from examiner's pairwise prompt, or None."""
    found = [TAGS[name].search(text) for name in ("instruction", "answer_1", "answer_2")]
    if any(m is None for m in found):
        return None
    return found[0].group(1), found[1].group(1), found[2].group(1)  # type: ignore[union-attr]


def grade_reply(p_first: float, draw: float | None = None) -> tuple[str, list[dict[str, Any]]]:
    """The grade line for p(first better) and its token log-probabilities (OpenAI's `logprobs.content`);
    `draw` in [0, 1): sample the verdict instead of taking the likelier one."""
    p = min(max(p_first, FLOOR), 1 - FLOOR)
    first = p >= 0.5 if draw is None else draw < p
    alternatives = [{"token": " 5", "logprob": math.log(p), "bytes": None},
                    {"token": " 7", "logprob": math.log(1 - p), "bytes": None}]
    chosen = alternatives[0] if first else alternatives[1]
    tokens = [{"token": "6", "logprob": 0.0, "bytes": None, "top_logprobs": [{"token": "6", "logprob": 0.0, "bytes": None}]},
              {**chosen, "top_logprobs": alternatives}]
    return "6" + str(chosen["token"]), tokens


class EncoderChat:
    """An encoder judge answering chat requests one at a time (the serve-local ChatModel's interface)."""

    def __init__(self, folder: Path, name: str | None = None, threads: int | None = None) -> None:
        self.judge = EncoderJudge(folder, threads=threads)
        self.name = name or folder.name
        self._lock = threading.Lock()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat completion answering a pairwise judge's request (ValueError for any other)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list")
        text = "\n".join(str(m.get("content") or "") for m in messages if isinstance(m, dict) and m.get("role") == "user")
        pair = read_pair(text)
        if pair is None:
            raise ValueError("the encoder judge reads examiner's pairwise prompts only (<instruction>, <answer_1>, "
                             "<answer_2>); this request is not one")
        with self._lock:
            verdict = self.judge.judge([pair])[0]
        temperature = float(body.get("temperature") or 0.0)
        rng = random.Random(int(body["seed"])) if body.get("seed") is not None else random.Random()
        draw = rng.random() if temperature > 0 else None
        reply, tokens = grade_reply(verdict.p_first, draw)
        prompt = sum(len(part) for part in pair) // 4
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": self.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                         "logprobs": {"content": tokens, "refusal": None} if body.get("logprobs") else None,
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 2, "total_tokens": prompt + 2},
        }


__all__ = ["EncoderChat", "grade_reply", "read_pair"]
