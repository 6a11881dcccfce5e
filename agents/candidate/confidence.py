"""The confidence a target states at the end of its answer (prompts/exam_answer.md asks for a last line
`Confidence: N%`), read tolerantly: models write `Confidence: 80%`, `confidence - 0.8`, `(Confidence: 80 percent)`
or nothing. Why the target's own words: a verbalised confidence is what a user of the model sees, and the
report's calibration figures (ECE, Brier, risk-coverage) say whether it can be trusted."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from examiner.llm import TokenLogprob

_STATED = re.compile(
    r"[\(\[]?\s*\**confidence\**\s*(?:level)?\s*[:=\-–—]?\s*\**\s*(\d{1,3}(?:[.,]\d+)?)\s*(%|percent|per cent)?\s*\**[\)\]]?\.?\s*$",
    re.I)


def stated_confidence(text: str) -> tuple[str, float | None]:
    """(the answer without its confidence line, the confidence in [0, 1]) when the answer ends with one;
    (the answer as it is, None) otherwise. `80`, `80%` and `0.8` all read 0.8; a value above 100 is no
    confidence."""
    stripped = text.rstrip()
    match = _STATED.search(stripped[-80:])
    if match is None:
        return text, None
    value = float(match.group(1).replace(",", "."))
    if not match.group(2) and value <= 1:
        confidence = value
    elif value <= 100:
        confidence = value / 100
    else:
        return text, None
    start = len(stripped) - len(stripped[-80:]) + match.start()
    return stripped[:start].rstrip(), confidence


def token_confidence(tokens: Sequence[TokenLogprob] | None) -> float | None:
    """The answer's geometric-mean token probability, exp(mean logprob), when the endpoint gave logprobs."""
    if not tokens:
        return None
    return math.exp(sum(t.logprob for t in tokens) / len(tokens))


__all__ = ["stated_confidence", "token_confidence"]
