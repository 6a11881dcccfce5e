"""Examiner role, `llm` unit mode: condense passages into atomic statements linked to their passage."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.prompting.fence import Markup, lines, tagged
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.llm.structured import parse_structured

EXTRACT_MAX_TOKENS = 1500
"""The examiner's output limit for one extraction reply (max_tokens)."""
REPLY_TOKENS_PER_PASSAGE_TOKEN = 1.6
"""Expected reply tokens per passage token: the statements restate the passage (about 1:1) and each
carries about a dozen tokens of JSON and passage id. Batches are sized with it so a reply fits."""


class Statement(BaseModel):
    passage_id: str
    text: str


class Statements(BaseModel):
    """Atomic statements, each naming the passage it came from."""

    units: list[Statement]


EXTRACT = Prompt.of("exam_extract", "passages", generation=GenerationConfig(max_tokens=EXTRACT_MAX_TOKENS))
CARD = AgentCard(agent="examiner", name="unit extractor", role="examiner", prompts=(EXTRACT,),
                 reply_schemas=(Statements,))


@dataclass(frozen=True)
class Extraction:
    """One extraction call's statements, or why there are none (`problem`), and whether the reply was
    cut at the output limit."""

    statements: list[Statement]
    problem: str = ""
    cut: bool = False


def passage_block(passages: list[tuple[str, str]]) -> Markup:
    """Passages as `<passage id="...">text</passage>` lines, texts escaped (agents/prompting/fence.py)."""
    return lines(tagged("passage", text, id=pid) for pid, text in passages)


async def extract_statements(
    gateway: Gateway, passages: list[tuple[str, str]], *, max_tokens: int = EXTRACT_MAX_TOKENS
) -> Extraction:
    """One call over several passages. The reply is parsed here, without the gateway's re-asks: a reply
    cut at `max_tokens` would only be cut again, so the caller splits the batch instead."""
    messages = EXTRACT.render(passages=passage_block(passages))
    result = await gateway.chat(
        CARD.role, messages, replace(EXTRACT.config(), max_tokens=max_tokens), CallContext(stage="extract_units"),
        response_schema=Statements,
    )
    cut = result.finish_reason == "length"
    parsed, error = parse_structured(result.text, Statements, truncated=cut)
    if not isinstance(parsed, Statements):
        reason = f"reply cut at the output limit ({max_tokens} tokens)" if cut else f"reply unusable: {error}"
        return Extraction([], reason, cut)
    return Extraction(list(parsed.units), cut=cut)
