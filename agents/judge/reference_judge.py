"""Single-score judge with a reference answer (used with plain references and RevisEval's revised ones).

Also, for the exam graph's RevisEval mode, a per-unit labeller that reads the revised reference.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.judge.unit_judge import marks_from_verdicts
from examiner.agents.parsing import parse_single_score
from examiner.agents.prompting import unit_block
from examiner.core.contract import Mark
from examiner.core.labels import Unscored, Verdict
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.agents.prompting.passing import passed

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
    messages = SCORE.render(instruction=instruction, response=passed(gw, response), reference=passed(gw, reference),
                            scale=scale)
    result = await gw.chat(CARD.role, messages, replace(SCORE.config(), max_tokens=max_tokens),
                           CallContext(stage="reference_score", item_id=item_id), endpoint=endpoint)
    score, reason, error = parse_single_score(result.text, 1, scale)
    if score is None:
        assert error is not None  # parse_single_score says why whenever it finds no score
        return ReferenceScore(Unscored(error, result.text), reason, result.text)
    return ReferenceScore(score, reason, result.text)


class UnitVerdict(BaseModel):
    unit_id: str
    type: Literal["correct", "incorrect", "unrelated", "abstained"]
    reason: str


class UnitVerdicts(BaseModel):
    verdicts: list[UnitVerdict]


SCORE = Prompt.of("reference_judge", "instruction", "response", "reference", "scale",
                  generation=GenerationConfig(max_tokens=256))
UNITS = Prompt.of("reference_judge_units", "question", "answer", "revised", "units",
                  generation=GenerationConfig(max_tokens=1024))
CARD = AgentCard(agent="judge", name="reference judge", role=ROLE, prompts=(SCORE, UNITS),
                 reply_schemas=(UnitVerdicts,),
                 text_reply="reference_judge: the score (1..scale) on the first line, then the reason "
                            "(agents/parsing.parse_single_score)")


async def label_units_with_revision(
    gw: Gateway,
    *,
    question: str,
    answer: str,
    revised: str,
    units: list[tuple[str, str]],
    round: int = 0,
    endpoint: str | None = None,
) -> dict[str, Mark[Verdict]]:
    """A mark per unit: the judge's label, or unscored (with why) for a unit it skipped or for every unit
    when its reply did not parse. Verdicts naming other ids are dropped."""
    messages = UNITS.render(question=question, answer=passed(gw, answer), revised=passed(gw, revised),
                            units=unit_block(units))
    result = await gw.chat(CARD.role, messages, UNITS.config(),
                           CallContext(stage="reviseval_units", round=round, unit_ids=tuple(u for u, _ in units)),
                           schema=UnitVerdicts, endpoint=endpoint)
    if isinstance(result.parsed, UnitVerdicts):
        found = marks_from_verdicts(result.parsed.verdicts)
        missing = Mark.unscored("the judge gave no verdict for this unit")
    else:
        found, missing = {}, Mark.unscored(f"unparseable judge reply: {result.parsed.error}", result.text)
    return {uid: found.get(uid, missing) for uid, _ in units}
