"""Pairwise judge role (JudgeLM style): two grades on the first line, then an optional reason.

Grade-only mode asks for the grade line alone and caps the reply at a few tokens: the verdict needs
nothing else, so judging is several times cheaper (the reason is for humans).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from examiner.core.labels import Preferred, Unscored
from examiner.agents.parsing import parse_score_line, verdict_from_scores
from examiner.llm.gateway import Gateway
from examiner.llm.types import CallContext, GenerationConfig
from examiner.agents.prompting import render
from examiner.agents.prompting.fence import Markup, fenced

ROLE = "pairwise"
GRADE_ONLY_MAX_TOKENS = 12


class PairGrades(BaseModel):
    """Structured variant of the grade line (grade-only): for models that cannot keep a text format."""

    score_1: int
    score_2: int


class PairGradesReason(PairGrades):
    reason: str


@dataclass
class PairJudgment:
    """One judgment of one ordering: `preference` is in the order shown (FIRST = the answer shown first
    wins), or Unscored with why the reply could not be read; the grades are in the order shown too."""

    score_1: float | None
    score_2: float | None
    preference: Preferred
    reason: str
    text: str


def pairwise_messages(instruction: str, answer_1: str, answer_2: str, reference: str | None = None,
                      grade_only: bool = False, structured: bool = False) -> list[dict[str, str]]:
    """The chat messages of one pairwise judgment."""
    if structured:
        after = "" if grade_only else 'Then "reason": a brief explanation of the grades.'
        rule = render("pairwise_rules_json", after_line=after)[-1]["content"]
    else:
        after = ("Write nothing after that line." if grade_only
                 else "From line 2 on, explain the grades briefly.")
        rule = render("pairwise_rules", after_line=after)[-1]["content"]
    if reference:
        note = "A reference answer is given; use it to check correctness, not as a style template."
        block = Markup(f"\n{fenced('reference', reference)}\n")
    else:
        note, block = "", ""
    return render("pairwise", instruction=instruction, answer_1=answer_1, answer_2=answer_2,
                  reference_note=note, reference_block=Markup(block), output_rule=Markup(rule))


async def judge_pair(
    gw: Gateway,
    *,
    instruction: str,
    answer_1: str,
    answer_2: str,
    reference: str | None = None,
    grade_only: bool = False,
    tie_threshold: float = 0.0,
    item_id: str = "",
    endpoint: str | None = None,
    max_tokens: int = 384,
    structured: bool = False,
) -> PairJudgment:
    """Judge one ordering of a pair; an unparseable reply gives an Unscored preference with the error.

    `structured=True` asks for the grades as a JSON object (scores first, then the reason) instead of
    the text line: same judgment, but an endpoint with constrained decoding cannot break the format.
    """
    messages = pairwise_messages(instruction, answer_1, answer_2, reference, grade_only, structured)
    if structured:
        schema = PairGrades if grade_only else PairGradesReason
        result = await gw.chat(ROLE, messages, GenerationConfig(max_tokens=40 if grade_only else max_tokens),
                               CallContext(stage="grade" if grade_only else "explain", item_id=item_id),
                               schema=schema, endpoint=endpoint)
        parsed = result.parsed
        if isinstance(parsed, PairGrades) and not all(1 <= v <= 10 for v in (parsed.score_1, parsed.score_2)):
            return _unscored(f"grades {parsed.score_1} {parsed.score_2} outside 1-10", result.text)
        if isinstance(parsed, PairGrades):
            s1, s2 = float(parsed.score_1), float(parsed.score_2)
            reason = getattr(parsed, "reason", "")
            return PairJudgment(s1, s2, verdict_from_scores(s1, s2, tie_threshold), reason, result.text)
        return _unscored(f"unparseable JSON grades: {parsed.error}", result.text)
    result = await gw.chat(
        ROLE, messages, GenerationConfig(max_tokens=GRADE_ONLY_MAX_TOKENS if grade_only else max_tokens),
        CallContext(stage="grade" if grade_only else "explain", item_id=item_id), endpoint=endpoint,
    )
    line = parse_score_line(result.text)
    reason = "" if grade_only else line.reason
    if line.error is not None:
        return PairJudgment(line.score_1, line.score_2, Unscored(line.error, result.text), reason, result.text)
    assert line.score_1 is not None and line.score_2 is not None
    return PairJudgment(line.score_1, line.score_2, verdict_from_scores(line.score_1, line.score_2, tie_threshold),
                        reason, result.text)


def _unscored(reason: str, text: str) -> PairJudgment:
    return PairJudgment(None, None, Unscored(reason, text), "", text)
