"""Single-score judge with a reference answer (used with plain references and RevisEval's revised ones).

Also, for the exam graph's RevisEval mode, a per-unit labeller that reads the revised reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from examiner.core.labels import Unscored
from examiner.roles.parsing import parse_single_score
from examiner.llm.gateway import Gateway
from examiner.llm.types import Unparseable
from examiner.prompting import render, unit_block

ROLE = "judge"


@dataclass
class ReferenceScore:
    """A 1..scale grade with its reason, or Unscored with why when the reply did not parse."""

    score: float | Unscored
    reason: str
    text: str


async def score_with_reference(
    gw: Gateway,
    *,
    instruction: str,
    response: str,
    reference: str,
    scale: int = 10,
    item_id: str = "",
    endpoint: str | None = None,
    max_tokens: int = 256,
) -> ReferenceScore:
    """Grade `response` against `reference` on 1..scale."""
    messages = render("reference_judge", instruction=instruction, response=response, reference=reference, scale=scale)
    result = await gw.chat(ROLE, messages, stage="reference_score", item_id=item_id, endpoint=endpoint,
                           max_tokens=max_tokens)
    score, reason, error = parse_single_score(result.text, 1, scale)
    return ReferenceScore(Unscored(error, result.text) if score is None else score, reason, result.text)


class UnitVerdict(BaseModel):
    unit_id: str
    type: Literal["correct", "incorrect", "unrelated"]
    reason: str


class UnitVerdicts(BaseModel):
    verdicts: list[UnitVerdict]


async def label_units_with_revision(
    gw: Gateway,
    *,
    question: str,
    answer: str,
    revised: str,
    units: list[tuple[str, str]],
    round: int = 0,
    endpoint: str | None = None,
) -> dict[str, tuple[str, str]]:
    """{unit_id: (type, reason)}; units the judge skipped, or all of them on an unparseable reply,
    are labelled `unparseable`."""
    messages = render("reference_judge_units", question=question, answer=answer, revised=revised,
                      units=unit_block(units))
    result = await gw.chat(ROLE, messages, schema=UnitVerdicts, stage="reviseval_units", round=round,
                           unit_ids=[u for u, _ in units], endpoint=endpoint, max_tokens=1024)
    out: dict[str, tuple[str, str]] = {}
    if isinstance(result.parsed, UnitVerdicts):
        known = {u for u, _ in units}
        for verdict in result.parsed.verdicts:
            if verdict.unit_id in known and verdict.unit_id not in out:
                out[verdict.unit_id] = (verdict.type, verdict.reason)
        missing_reason = "the judge gave no verdict for this unit"
    else:
        error = result.parsed.error if isinstance(result.parsed, Unparseable) else "no reply"
        missing_reason = f"unparseable judge reply: {error}"
    for uid, _ in units:
        out.setdefault(uid, ("unparseable", missing_reason))
    return out
