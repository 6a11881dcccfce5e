"""Reviser agent (RevisEval): rewrites a response into a response-adapted reference.

The reference keeps what the response gets right and fixes the rest, so a judge or a classic metric
compares the response with a reference that is close to it in form; pairwise, the other response is
shown as guidance that may itself be wrong.
"""

from __future__ import annotations

from dataclasses import replace

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.prompting import unit_block
from examiner.agents.prompting.fence import Markup, fenced
from examiner.core.labels import Unscored
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.agents.prompting.passing import passed

ROLE = "reviser"
GENERATION = GenerationConfig(max_tokens=768)
REVISE = Prompt.of("reviser", "instruction", "response", "rubric_line", generation=GENERATION)
REVISE_GUIDED = Prompt.of("reviser_guided", "instruction", "response", "guidance", "rubric_line", generation=GENERATION)
REVISE_UNITS = Prompt.of("reviser_units", "question", "answer", "units", generation=GENERATION)
CARD = AgentCard(agent="reviser", name="reviser", role=ROLE, prompts=(REVISE, REVISE_GUIDED, REVISE_UNITS),
                 text_reply="the revised response as written (an empty reply is a failed revision)")


def _revised(reply: str | None) -> str | Unscored:
    text = (reply or "").strip()
    return text or Unscored("revision failed: reviser returned an empty reply")


def _rubric_line(rubric: str | None) -> Markup:
    """The rubric (a dataset's or the user's text) in a fence of its own, or nothing."""
    return Markup(f"Judge quality by this rubric:\n{fenced('rubric', rubric.strip())}\n") if rubric and rubric.strip() else Markup("")


async def revise(
    gw: Gateway,
    *,
    instruction: str,
    response: str,
    rubric: str | None = None,
    guidance: str | None = None,
    item_id: str = "",
    endpoint: str | None = None,
    max_tokens: int = GENERATION.max_tokens,
) -> str | Unscored:
    """The response-adapted reference for `response` (guided by `guidance` when given), or Unscored
    when the reviser returned nothing usable (no judgment can follow)."""
    response = passed(gw, response)
    if guidance is not None:
        messages = REVISE_GUIDED.render(instruction=instruction, response=response, guidance=passed(gw, guidance),
                                        rubric_line=_rubric_line(rubric))
    else:
        messages = REVISE.render(instruction=instruction, response=response, rubric_line=_rubric_line(rubric))
    result = await gw.chat(CARD.role, messages, replace(GENERATION, max_tokens=max_tokens),
                           CallContext(stage="revise", item_id=item_id), endpoint=endpoint)
    return _revised(result.text)


async def revise_with_units(
    gw: Gateway,
    *,
    question: str,
    answer: str,
    units: list[tuple[str, str]],
    round: int = 0,
    endpoint: str | None = None,
    max_tokens: int = GENERATION.max_tokens,
) -> str | Unscored:
    """Exam mode: the answer corrected against the reference units (the units act as the rubric)."""
    messages = REVISE_UNITS.render(question=question, answer=passed(gw, answer), units=unit_block(units))
    result = await gw.chat(CARD.role, messages, replace(GENERATION, max_tokens=max_tokens),
                           CallContext(stage="exam_revise", round=round, unit_ids=tuple(u for u, _ in units)),
                           endpoint=endpoint)
    return _revised(result.text)
