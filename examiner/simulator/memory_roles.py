"""The candidate in a memorisation probe (stage `memory_probe`): it finishes a sentence whose second half
was held back, from a memory the test decides.

How it knows the held-back half: the probe registers each sentence's start through the oracle (POST
/sim/oracle: sha1 of the start -> {"ending": ..., "document": "corpus/ID" or "control/ID"}), as judging
tests register gold labels; a real endpoint gets no oracle. Options:
- `memorised`: fnmatch patterns of those document names the simulated target has read (default none);
- `memory_recall` (default 0.8): the chance it reproduces a held-back half of a memorised document word for
  word when told the source (hint `guided`), and `memory_unprompted` (default 0.25) without the source.
Otherwise it writes filler of about the held-back half's length, so guided and general completions of an
unread document score alike and the probe should find no gap there.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from examiner.simulator.behaviours import Completion, SimRequest, fence_content, oracle_key, register_behaviour
from examiner.simulator.prose import filler_sentence, stable_uniform


def _memorised(req: SimRequest, document: str) -> bool:
    patterns = req.option("memorised", ())
    return any(fnmatch.fnmatchcase(document, str(p)) for p in patterns)


@register_behaviour("candidate", "memory_probe")
def complete_sentence(req: SimRequest) -> Completion:
    """The held-back half word for word (memorised, recalled this time), else filler of its length."""
    start = fence_content(req.last_user, "sentence_start") or ""
    entry = req.oracle.get(oracle_key(start.strip())) if isinstance(req.oracle, Mapping) else None
    ending = str(entry.get("ending", "")) if isinstance(entry, Mapping) else ""
    document = str(entry.get("document", "")) if isinstance(entry, Mapping) else ""
    guided = bool(req.hint("guided", False))
    chance = float(req.option("memory_recall", 0.8) if guided else req.option("memory_unprompted", 0.25))
    if ending and _memorised(req, document) and stable_uniform(req.seed, "memory", req.prompt_key) < chance:
        return ending
    rng = req.rng("memory_filler")
    words: list[str] = []
    while len(words) < max(4, len(ending.split())):
        words += filler_sentence(rng).split()
    return " ".join(words[: max(4, len(ending.split()))])
