"""The simulated server's prompt cache: `cached_tokens` reported the way OpenAI reports them.

OpenAI caches prompt prefixes on its own: a request whose first 1,024 tokens or more were sent before (to
the same model) is billed for the longest such prefix at the cached-input price, in steps of 128 tokens,
and `usage.prompt_tokens_details.cached_tokens` says how many. The simulated server does the same per
model for the life of its process (until POST /sim/reset), so a prompt order that puts fixed instructions
first is measurably cheaper offline.

Cheap and deterministic: a prompt becomes one token sequence of exactly `prompt_tokens` tokens (each
message: 3 framing tokens naming its role, then its content's cl100k tokens; 3 closing tokens, as
examiner.core.tokens counts them), hashed once, incrementally, at every 128-token boundary. A prefix seen
before means all its shorter boundary prefixes were seen too, so each boundary prefix is "seen before" for
all requests that share it but the first one: a run's total cached tokens do not depend on the order in
which concurrent requests arrive (which request pays the miss does).
"""

from __future__ import annotations

import hashlib
from array import array

MIN_PREFIX = 1024
"""Shortest prefix (tokens) a provider caches."""
STEP = 128
"""Cached prefixes grow in steps of this many tokens."""
_FRAME = 1 << 30
"""Framing tokens lie far outside the cl100k vocabulary, so they never collide with text."""
_ROLES = {"system": 1, "developer": 1, "user": 2, "assistant": 3, "tool": 4}


def frame(role: str) -> tuple[int, int, int]:
    """The 3 tokens that open a message of `role` (OpenAI's per-message overhead)."""
    return _FRAME, _FRAME + _ROLES.get(role, 5), _FRAME


CLOSING = (_FRAME + 9, _FRAME + 9, _FRAME + 9)
"""The 3 tokens that prime the reply."""


class PromptCache:
    """The prefixes each model has seen, as digests of their tokens at STEP boundaries from MIN_PREFIX on."""

    def __init__(self) -> None:
        self._seen: dict[str, set[bytes]] = {}

    def cached_tokens(self, model: str, tokens: array) -> int:
        """The longest prefix of `tokens` (an array of type "I": 4 bytes a token; a multiple of STEP, at least
        MIN_PREFIX) that `model` saw before, 0 if none; then remembers this prompt's prefixes."""
        seen = self._seen.setdefault(model, set())
        data = tokens.tobytes()
        digest = hashlib.blake2b(digest_size=16)
        cached = 0
        for end in range(STEP, len(tokens) + 1, STEP):
            digest.update(data[(end - STEP) * 4:end * 4])  # 4 bytes a token
            if end < MIN_PREFIX:
                continue
            key = digest.digest()
            if key in seen:
                cached = end
            else:
                seen.add(key)
        return cached
