"""The encoder judge behind the chat-completions API (`examiner serve-local --model ENCODER_FOLDER`), so a
config endpoint names it like any other judge, e.g. as a pairwise cascade's cheap tier.

Why a chat face on a model that writes nothing: examiner's pairwise judges send their own prompt and parse
a grade line; this server reads the instruction and the two answers back out of that prompt (the tags of
examiner's pairwise prompt) and answers with a grade line that carries the judge's calibrated verdict:
"6 5" when answer 1 is the better (p >= 0.5), else "6 7". With `logprobs`, the second grade's token lists
both alternatives, log p and log(1 - p), and the first grade is certain, so grade_confidence reads
P(first) = p exactly. With a temperature above 0 the verdict is drawn with probability p (seeded by the
request's `seed`), so a cascade reading confidence from samples sees the same p.

A judge taught exam units (`examiner distil --exam RUN --student encoder --encoder-mode cross`,
examiner/llm/encoder_units.py) answers examiner's Ref-Eval judge prompt instead (the one with each unit's
source passage, which a cascade sends its cheap tier with `cheap_passages`, when it was taught on passages): the JSON label map the
exam judge asks for, each label the likelier one (or drawn, above temperature 0, one set per requested
choice `n`), and with `logprobs` each label's token carries log p(label), so the exam cascade's
label_confidences reads the judge's calibrated probability exactly. A prompt of the other kind is refused
with a 400 that says so.
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

from examiner.llm.encoder_judge import INFO_FILE, EncoderJudge
from examiner.llm.encoder_units import LABELS, UnitJudge, is_units_judge, read_exam_prompt

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
        import json

        info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.units = UnitJudge(folder, info) if is_units_judge(info) else None
        self.judge = None if self.units is not None else EncoderJudge(folder, threads=threads)
        self.name = name or folder.name
        self._lock = threading.Lock()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat completion answering a pairwise judge's request (ValueError for any other)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list")
        text = "\n".join(str(m.get("content") or "") for m in messages if isinstance(m, dict) and m.get("role") == "user")
        temperature = float(body.get("temperature") or 0.0)
        rng = random.Random(int(body["seed"])) if body.get("seed") is not None else random.Random()
        if self.units is not None:
            return self._exam(body, text, temperature, rng)
        pair = read_pair(text)
        if pair is None or self.judge is None:
            raise ValueError("the encoder judge reads examiner's pairwise prompts only (<instruction>, <answer_1>, "
                             "<answer_2>); this request is not one (a judge of exam units is taught with "
                             "`examiner distil --exam RUN --student encoder --encoder-mode cross`)")
        with self._lock:
            verdict = self.judge.judge([pair])[0]
        draw = rng.random() if temperature > 0 else None
        reply, tokens = grade_reply(verdict.p_first, draw)
        prompt = sum(len(part) for part in pair) // 4
        return _completion(self.name, [(reply, tokens)], body, prompt)

    def _exam(self, body: dict[str, Any], text: str, temperature: float, rng: random.Random) -> dict[str, Any]:
        read = read_exam_prompt(text)
        if read is None or self.units is None:
            raise ValueError("this encoder judge was taught exam units: it reads examiner's Ref-Eval judge prompts "
                             "only (<exam_question>, <exam_answer>, <U1> unit lines); this request is not one")
        if self.units.reads_passages and read.passages is None:
            raise ValueError("this encoder judge reads each unit's source passage, and this Ref-Eval judge prompt "
                             "shows none: name it in the judge cascade with `cheap_passages: true`")
        names = [name for name, _ in read.units]
        passages = None if read.passages is None else [read.passages.get(name, "") for name in names]
        with self._lock:
            probabilities = self.units.probabilities(read.question, read.answer, [u for _, u in read.units],
                                                     passages)
        n = max(1, int(body.get("n") or 1))
        choices = [units_reply(names, probabilities, rng if temperature > 0 else None) for _ in range(n)]
        return _completion(self.name, choices, body, (len(text) + 3) // 4)


def units_reply(names: list[str], probabilities: list[dict[str, float]],
                rng: random.Random | None = None) -> tuple[str, list[dict[str, Any]]]:
    """The Ref-Eval judge's JSON reply for each unit's label probabilities, and its tokens: every label a
    token of its own whose log-probability is log p(label) (its alternatives the other labels), the rest
    certain. `rng`: draw each label instead of taking the likelier one."""
    tokens: list[dict[str, Any]] = []

    def add(text: str, logprob: float = 0.0, alternatives: list[dict[str, Any]] | None = None) -> None:
        tokens.append({"token": text, "logprob": logprob, "bytes": None,
                       "top_logprobs": alternatives or [{"token": text, "logprob": logprob, "bytes": None}]})

    labels: dict[str, str] = {}
    add('{"labels": {')
    for k, (name, p) in enumerate(zip(names, probabilities)):
        if rng is None:
            label = max(LABELS, key=lambda lab: p[lab])
        else:
            label = rng.choices(LABELS, weights=[p[lab] for lab in LABELS])[0]
        labels[name] = label
        alternatives = [{"token": lab, "logprob": math.log(min(max(p[lab], FLOOR), 1.0)), "bytes": None}
                        for lab in sorted(LABELS, key=lambda lab: -p[lab])]
        add(("" if k == 0 else ", ") + f'"{name}": "')
        add(label, math.log(min(max(p[label], FLOOR), 1.0)), alternatives)
        add('"')
    reasons = [{"unit": name, "reason": f"encoder judge: p(incorrect) {p['incorrect']:.2f}"}
               for name, p in zip(names, probabilities) if labels[name] == "incorrect"]
    import json

    add('}, "reasons": ' + json.dumps(reasons) + "}")
    return "".join(t["token"] for t in tokens), tokens


def _completion(model: str, choices: list[tuple[str, list[dict[str, Any]]]], body: dict[str, Any],
                prompt: int) -> dict[str, Any]:
    """An OpenAI chat completion holding `choices` (reply text, its tokens)."""
    completion = sum(len(tokens) for _, tokens in choices)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": k, "message": {"role": "assistant", "content": reply},
                     "logprobs": {"content": tokens, "refusal": None} if body.get("logprobs") else None,
                     "finish_reason": "stop"} for k, (reply, tokens) in enumerate(choices)],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


__all__ = ["EncoderChat", "grade_reply", "read_pair", "units_reply"]
