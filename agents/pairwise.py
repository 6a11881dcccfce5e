"""Pairwise judge agent (JudgeLM style): two grades on the first line, then an optional reason.

Grade-only mode asks for the grade line alone and caps the reply at a few tokens: the verdict needs
nothing else, so judging is several times cheaper (the reason is for humans).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from examiner.judging.parsing import parse_score_line, verdict_from_scores
from examiner.llm.gateway import Gateway
from examiner.prompting import render

ROLE = "pairwise"
GRADE_ONLY_MAX_TOKENS = 12


@dataclass
class PairJudgment:
    """One judgment of one ordering; `verdict` is in the order shown (1 = first answer shown wins)."""

    score_1: float | None
    score_2: float | None
    verdict: int | None
    reason: str
    error: str | None
    text: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def pairwise_messages(instruction: str, answer_1: str, answer_2: str, reference: str | None = None,
                      grade_only: bool = False) -> list[dict[str, str]]:
    """The chat messages of one pairwise judgment."""
    after = ("Write nothing after that line." if grade_only
             else "From line 2 on, explain the grades briefly.")
    rule = render("pairwise_rules", after_line=after)[-1]["content"]
    if reference:
        note = "A reference answer is given; use it to check correctness, not as a style template."
        block = f"\n<reference>\n{reference}\n</reference>\n"
    else:
        note, block = "", ""
    return render("pairwise", instruction=instruction, answer_1=answer_1, answer_2=answer_2,
                  reference_note=note, reference_block=block, output_rule=rule)


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
) -> PairJudgment:
    """Judge one ordering of a pair; an unparseable reply gives verdict None with the error."""
    messages = pairwise_messages(instruction, answer_1, answer_2, reference, grade_only)
    result = await gw.chat(
        ROLE, messages, stage="grade" if grade_only else "explain", item_id=item_id, endpoint=endpoint,
        max_tokens=GRADE_ONLY_MAX_TOKENS if grade_only else max_tokens,
    )
    line = parse_score_line(result.text)
    verdict = None
    if line.error is None:
        assert line.score_1 is not None and line.score_2 is not None
        verdict = verdict_from_scores(line.score_1, line.score_2, tie_threshold)
    return PairJudgment(line.score_1, line.score_2, verdict, "" if grade_only else line.reason, line.error,
                        result.text)
