"""OpenAI-shaped token logprobs for a simulated completion.

Ordinary tokens get a confident, seeded probability with a few common tokens as alternatives. A
completion that is a single score ("1".."10") gets a distribution over the whole scale, peaked at the
chosen score, so probability-weighted scoring (G-Eval) has something meaningful to weigh. A behaviour that
chose a value with a known probability (a judge's label, a grade) names it as a `ChosenValue`: the token
that starts the value then carries that probability and its alternatives, so a reader of log-probabilities
(a judge cascade's confidence) sees how sure the simulated model was.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from examiner.simulator.prose import rng_for
from examiner.core.tokens import encoding

_ALTERNATIVES = (" the", " a", ",", ".", " of", " and", " to", " in", " is", " that", " it", " for",
                 " on", " as", " with", " was", " this", " by", " be", " are", " not")
_SCORES = tuple(str(i) for i in range(1, 11))


@dataclass(frozen=True)
class ChosenValue:
    """A value the simulated model chose with a known probability: the first match of `pattern`'s group 1
    in the completion is that value; `distribution` lists (value, probability) with the chosen one first."""

    pattern: str
    distribution: tuple[tuple[str, float], ...]

    def span(self, content: str) -> tuple[int, int] | None:
        """The value's (start, end) in UTF-8 bytes of `content` (tokens are counted in bytes)."""
        match = re.search(self.pattern, content)
        if match is None:
            return None
        start, end = match.span(1)
        return len(content[:start].encode()), len(content[:end].encode())


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def _score_distribution(score: int, top: int, key: int) -> list[tuple[str, float]]:
    """(token, logprob) over 1..top, highest first, peaked at `score`."""
    rng = rng_for(key, "score")
    sharp = rng.uniform(0.9, 1.8)
    weights = {str(i): math.exp(-sharp * abs(i - score)) for i in range(1, top + 1)}
    total = sum(weights.values())
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], int(kv[0])))
    return [(tok, math.log(w / total)) for tok, w in ranked]


def score_logprobs(content: str, top_logprobs: int, key: int, scale: int = 5) -> list[dict[str, Any]] | None:
    """Logprobs for a completion that is exactly one score, or None when it is not one."""
    text = content.strip()
    if text not in _SCORES:
        return None
    score = int(text)
    top = 10 if score > scale or scale > 5 else 5
    dist = _score_distribution(score, top, key)
    chosen = next(lp for tok, lp in dist if tok == text)
    entry = _entry(content, chosen)
    entry["top_logprobs"] = [_entry(tok, lp) for tok, lp in dist[: max(0, top_logprobs)]]
    return [entry]


def _chosen_entry(token: str, value: ChosenValue, top_logprobs: int) -> dict[str, Any]:
    """The first token of a chosen value: its probability, the alternatives' values as the others."""
    (_, p), *others = value.distribution
    entry = _entry(token, math.log(max(p, 1e-12)))
    alternatives = [entry.copy()] + [_entry(alt, math.log(max(q, 1e-12))) for alt, q in others if q > 0]
    entry["top_logprobs"] = alternatives[: max(0, top_logprobs)]
    return entry


def token_logprobs(content: str, top_logprobs: int, key: int, scale: int = 5,
                   chosen: Sequence[ChosenValue] = ()) -> list[dict[str, Any]]:
    """choices[i].logprobs.content for `content`: one entry per cl100k token. A token that starts a chosen
    value carries its probability; the value's later tokens are certain (logprob 0) given the first."""
    scored = score_logprobs(content, top_logprobs, key, scale)
    if scored is not None and not chosen:
        return scored
    enc = encoding()
    rng = rng_for(key, "tokens")
    spans = [(span, value) for value in chosen if (span := value.span(content)) is not None]
    out: list[dict[str, Any]] = []
    offset = 0
    for token_id in enc.encode(content, disallowed_special=()):
        raw = enc.decode_single_token_bytes(token_id)
        token = raw.decode("utf-8", errors="replace")
        start, offset = offset, offset + len(raw)
        inside = [(span, value) for span, value in spans if start < span[1] and offset > span[0]]
        if inside:
            (span, value), = inside[:1]
            if start <= span[0]:
                out.append(_chosen_entry(token, value, top_logprobs))
            else:
                out.append(_entry(token, 0.0) | {"top_logprobs": [_entry(token, 0.0)][: max(0, top_logprobs)]})
            continue
        p = rng.uniform(0.55, 0.99)
        entry = _entry(token, math.log(p))
        if top_logprobs > 0:
            rest = 1.0 - p
            alternatives = [_entry(token, math.log(p))]
            for alt in _ALTERNATIVES:
                if len(alternatives) >= top_logprobs:
                    break
                if alt == token:
                    continue
                rest /= 2
                alternatives.append(_entry(alt, math.log(rest)))
            entry["top_logprobs"] = alternatives
        else:
            entry["top_logprobs"] = []
        out.append(entry)
    return out
