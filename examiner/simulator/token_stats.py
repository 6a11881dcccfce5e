"""What the simulated target's full distribution says about each token of a given text (POST
/sim/token_logprobs), so the memorisation probe's Min-K%++ has a known truth to find.

A real model gives, per token of a text, its log-probability and the mean and standard deviation of the
log-probability at its position (examiner.stats.min_k). The simulated one draws them, deterministically by
(seed, text, position): the mean uniform in [-9, -6], the standard deviation in [1.5, 2.5], and the
token's standardised log-probability z from a normal distribution of sd 1 centred on 0, or on
`memory_min_k_shift` (default 1.0) when the text belongs to a document the target read (`memorised`,
the patterns the completion behaviour reads; the document is found through the oracle: sha1 of the whole
sentence -> {"document": "corpus/ID"}). A log-probability is never above 0 (z is cut there). So the true
Min-K%++ of an unread text is about the mean of the lowest k % of standard normal draws (-1.40 at k = 20
for long texts, lower for a few tokens), and a read one's is higher by about the shift.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from examiner.core.tokens import encoding
from examiner.simulator.behaviours import oracle_key
from examiner.simulator.prose import rng_for


def memorised_document(text: str, options: Mapping[str, Any], oracle: Mapping[str, Any]) -> bool:
    """Whether the oracle places `text` in a document the `memorised` patterns name."""
    entry = oracle.get(oracle_key(text.strip()))
    document = str(entry.get("document", "")) if isinstance(entry, Mapping) else ""
    patterns = options.get("memorised") or ()
    return bool(document) and any(fnmatch.fnmatchcase(document, str(p)) for p in patterns)


def token_logprobs(text: str, options: Mapping[str, Any], oracle: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """{"tokens", "logprob", "mean", "sd"} for every token of `text` after the first (which has no context)."""
    tokens = [encoding().decode([t]) for t in encoding().encode(text, disallowed_special=())]
    shift = float(options.get("memory_min_k_shift", 1.0)) if memorised_document(text, options, oracle) else 0.0
    rng = rng_for(seed, "min_k", oracle_key(text))
    logprob, mean, sd = [], [], []
    for _ in tokens[1:]:
        mu, sigma = -rng.uniform(6.0, 9.0), rng.uniform(1.5, 2.5)
        z = min(rng.gauss(shift, 1.0), -mu / sigma)
        logprob.append(mu + sigma * z)
        mean.append(mu)
        sd.append(sigma)
    return {"tokens": tokens[1:], "logprob": logprob, "mean": mean, "sd": sd}


__all__ = ["memorised_document", "token_logprobs"]
