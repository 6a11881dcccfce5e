"""Examiner role, `llm` unit mode: condense passages into atomic statements linked to their passage."""

from __future__ import annotations

from pydantic import BaseModel

from examiner.llm import CallContext, CallResult, Gateway, GenerationConfig
from examiner.prompting import render


class Statement(BaseModel):
    passage_id: str
    text: str


class Statements(BaseModel):
    """Atomic statements, each naming the passage it came from."""

    units: list[Statement]


def passage_block(passages: list[tuple[str, str]]) -> str:
    """Passages as `<passage id="...">text</passage>` lines."""
    return "\n".join(f'<passage id="{pid}">{text}</passage>' for pid, text in passages)


async def extract_statements(
    gateway: Gateway, passages: list[tuple[str, str]], *, max_tokens: int = 1500
) -> CallResult[Statements]:
    """One call over several passages."""
    messages = render("exam_extract", passages=passage_block(passages))
    return await gateway.chat(
        "examiner", messages, GenerationConfig(max_tokens=max_tokens), CallContext(stage="extract_units"),
        schema=Statements,
    )
