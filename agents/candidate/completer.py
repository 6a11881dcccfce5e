"""Candidate role, memorisation probe: the target finishes a sentence whose second half was held back,
once told where the sentence comes from (guided) and once not (general).

Why both: a model that read a document reproduces its sentences better when reminded of the source; a
model that did not has nothing to be reminded of, so the guided-minus-general overlap measures recall of
the document rather than how predictable its prose is (Golchin and Surdeanu, "Time Travel in LLMs").
"""

from __future__ import annotations

from examiner.agents.card import AgentCard, Prompt
from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig

PROBE_STAGE = "memory_probe"
"""The ledger stage of every probe call."""


def completion_tokens(ending_words: int) -> int:
    """max_tokens of a completion: room for the held-back half (about 1.6 tokens a word) and a margin."""
    return int(ending_words * 1.6) + 16


GUIDED = Prompt.of("memory_guided", "start", "source", generation=GenerationConfig(temperature=0.0),
                   max_tokens=completion_tokens, sized_by="words held back")
GENERAL = Prompt.of("memory_general", "start", generation=GenerationConfig(temperature=0.0),
                    max_tokens=completion_tokens, sized_by="words held back")
CARD = AgentCard(agent="candidate", name="sentence completer", role="candidate", prompts=(GUIDED, GENERAL),
                 text_reply="the rest of the sentence as written")


async def complete_sentence(gateway: Gateway, start: str, *, source: str | None, ending_words: int,
                            target: str | None, item_id: str) -> CallResult[str]:
    """The target's greedy completion of `start`: guided when `source` names where it comes from, general
    when None. `ending_words` (the held-back half's length) sizes the reply."""
    guided = source is not None
    messages = GUIDED.render(start=start, source=source) if guided else GENERAL.render(start=start)
    config = (GUIDED if guided else GENERAL).config(ending_words)
    return await gateway.chat(CARD.role, messages, config,
                              CallContext(stage=PROBE_STAGE, item_id=item_id, hints={"guided": guided}),
                              endpoint=target)
