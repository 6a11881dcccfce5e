"""Pairwise judge role (JudgeLM style): two grades on the first line, then an optional reason.

Grade-only mode asks for the grade line alone and caps the reply at a few tokens: the verdict needs
nothing else, so judging is several times cheaper (the reason is for humans).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.judge.grade_confidence import verdict_probabilities
from examiner.agents.parsing import parse_score_line, verdict_from_scores
from examiner.agents.prompting.fence import Markup, fenced
from examiner.core.labels import Preference, Preferred, Unscored
from examiner.llm import CallContext, Gateway, GenerationConfig
from examiner.agents.prompting.passing import passed

ROLE = "pairwise"
GRADE_ONLY_MAX_TOKENS = 12
STRUCTURED_GRADE_ONLY_MAX_TOKENS = 40
"""The grades alone as a JSON object: a few tokens of keys and braces more than the grade line."""


class PairGrades(BaseModel):
    """Structured variant of the grade line (grade-only): for models that cannot keep a text format."""

    score_1: int
    score_2: int


class PairGradesReason(PairGrades):
    reason: str


PAIRWISE = Prompt.of("pairwise", "instruction", "answer_1", "answer_2", "reference_note", "reference_block",
                     "output_rule", generation=GenerationConfig(max_tokens=384))
RULES = Prompt.of("pairwise_rules", "after_line")
"""The output rule of the grade line (a fragment of PAIRWISE)."""
RULES_JSON = Prompt.of("pairwise_rules_json", "after_line")
"""The output rule of the grades as JSON (a fragment of PAIRWISE)."""
CARD = AgentCard(agent="judge", name="pairwise judge", role=ROLE, prompts=(PAIRWISE, RULES, RULES_JSON),
                 reply_schemas=(PairGrades, PairGradesReason),
                 text_reply="two grades (1-10) on the first line, then the reason "
                            "(agents/parsing.parse_score_line)")


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
        rule = RULES_JSON.render(after_line=after)[-1]["content"]
    else:
        after = ("Write nothing after that line." if grade_only
                 else "From line 2 on, explain the grades briefly.")
        rule = RULES.render(after_line=after)[-1]["content"]
    note, block = "", Markup("")
    if reference:
        note = "A reference answer is given; use it to check correctness, not as a style template."
        block = Markup(f"\n{fenced('reference', reference)}\n")
    return PAIRWISE.render(instruction=instruction, answer_1=answer_1, answer_2=answer_2,
                           reference_note=note, reference_block=block, output_rule=Markup(rule))


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
    max_tokens: int = PAIRWISE.config().max_tokens,
    structured: bool = False,
) -> PairJudgment:
    """Judge one ordering of a pair; an unparseable reply gives an Unscored preference with the error.

    `structured=True` asks for the grades as a JSON object (scores first, then the reason) instead of
    the text line: same judgment, but an endpoint with constrained decoding cannot break the format.
    """
    messages = pairwise_messages(instruction, passed(gw, answer_1), passed(gw, answer_2), reference, grade_only,
                                 structured)
    context = CallContext(stage="grade" if grade_only else "explain", item_id=item_id)
    if structured:
        schema = PairGrades if grade_only else PairGradesReason
        limit = STRUCTURED_GRADE_ONLY_MAX_TOKENS if grade_only else max_tokens
        graded = await gw.chat(CARD.role, messages, replace(PAIRWISE.config(), max_tokens=limit), context,
                               schema=schema, endpoint=endpoint)
        parsed = graded.parsed
        if isinstance(parsed, PairGrades) and not all(1 <= v <= 10 for v in (parsed.score_1, parsed.score_2)):
            return _unscored(f"grades {parsed.score_1} {parsed.score_2} outside 1-10", graded.text)
        if isinstance(parsed, PairGrades):
            s1, s2 = float(parsed.score_1), float(parsed.score_2)
            reason = parsed.reason if isinstance(parsed, PairGradesReason) else ""
            return PairJudgment(s1, s2, verdict_from_scores(s1, s2, tie_threshold), reason, graded.text)
        return _unscored(f"unparseable JSON grades: {parsed.error}", graded.text)
    limit = GRADE_ONLY_MAX_TOKENS if grade_only else max_tokens
    result = await gw.chat(CARD.role, messages, replace(PAIRWISE.config(), max_tokens=limit), context,
                           endpoint=endpoint)
    line = parse_score_line(result.text)
    reason = "" if grade_only else line.reason
    if line.error is not None:
        return PairJudgment(line.score_1, line.score_2, Unscored(line.error, result.text), reason, result.text)
    assert line.score_1 is not None and line.score_2 is not None
    return PairJudgment(line.score_1, line.score_2, verdict_from_scores(line.score_1, line.score_2, tie_threshold),
                        reason, result.text)


def _unscored(reason: str, text: str) -> PairJudgment:
    return PairJudgment(None, None, Unscored(reason, text), "", text)


async def sample_pair_preferences(
    gw: Gateway,
    *,
    instruction: str,
    answer_1: str,
    answer_2: str,
    samples: int,
    temperature: float,
    reference: str | None = None,
    tie_threshold: float = 0.0,
    item_id: str = "",
    endpoint: str | None = None,
    stage: str = "grade_cascade",
) -> list[Preferred]:
    """`samples` grade-only judgments of one ordering in one request of `samples` choices at
    `temperature`, each a preference in the order shown (Unscored for a choice whose grade line does not
    parse). A judge cascade reads how often they agree as the judge's confidence."""
    messages = pairwise_messages(instruction, answer_1, answer_2, reference, grade_only=True)
    config = replace(PAIRWISE.config(), max_tokens=GRADE_ONLY_MAX_TOKENS, n=samples, temperature=temperature)
    result = await gw.chat(CARD.role, messages, config, CallContext(stage=stage, item_id=item_id), endpoint=endpoint)
    return [grade_line_preference(text, tie_threshold) for text in result.texts or [result.text]]


def grade_line_preference(text: str, tie_threshold: float = 0.0) -> Preferred:
    """A grade-only reply's preference in the order shown; Unscored (with why) when its line does not parse."""
    line = parse_score_line(text)
    if line.error is not None or line.score_1 is None or line.score_2 is None:
        return Unscored(line.error or "no grades", text)
    return verdict_from_scores(line.score_1, line.score_2, tie_threshold)


async def grade_probabilities(
    gw: Gateway,
    *,
    instruction: str,
    answer_1: str,
    answer_2: str,
    reference: str | None = None,
    tie_threshold: float = 0.0,
    item_id: str = "",
    endpoint: str | None = None,
    stage: str = "grade_cascade",
) -> tuple[Preferred, dict[Preference, float] | None]:
    """One greedy grade-only judgment of one ordering with logprobs: its preference in the order shown and
    how likely each verdict was (agents/judge/grade_confidence.py; None where the endpoint gave no
    logprobs or the grade line cannot be read from them). A pairwise cascade's one-call confidence."""
    messages = pairwise_messages(instruction, answer_1, answer_2, reference, grade_only=True)
    config = replace(PAIRWISE.config(), max_tokens=GRADE_ONLY_MAX_TOKENS, temperature=0.0, logprobs=True,
                     top_logprobs=10)
    result = await gw.chat(CARD.role, messages, config, CallContext(stage=stage, item_id=item_id), endpoint=endpoint)
    return grade_line_preference(result.text, tie_threshold), verdict_probabilities(result.logprobs, tie_threshold)
