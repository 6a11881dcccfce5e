"""Meta-judge role: judges the evaluators' judgments (JDEval, MDEval referee, JDEval-i, BSMEval).

Each function makes one model call and returns what the meta-judge said, or `Unscored` with the reason
when the reply could not be read or the call itself failed (`call_failed`); the caller counts it and
leaves it out, it never becomes a tie.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from examiner.llm import Gateway
from examiner.llm.gateway import ModelCallError
from examiner.llm.types import CallContext, GenerationConfig, M, Unparseable
from examiner.core.assessments import Assessment, Decision, MetaItem, Turn, labels_for
from examiner.core.labels import Preference, Unscored, call_failed
from examiner.agents.prompting.meta_blocks import (
    JDEVAL_TAGS,
    assessment_text,
    assessments_block,
    choices_text,
    item_block,
    match_assistant,
    match_label,
    read_tags,
    transcript_text,
)
from examiner.agents.prompting import render

REASONING_WORDS = 100
MAX_BRANCHES = 5
AssistantLabel = Literal["Assistant1", "Assistant2", "equally good"]


def _tokens(words: int) -> int:
    """A max_tokens that holds `words` English words plus JSON/tag overhead (~1.5 tokens a word)."""
    return int(words * 1.5) + 60


async def _structured(gateway: Gateway, messages: list[dict[str, str]], max_tokens: int, context: CallContext,
                      schema: type[M], endpoint: str | None) -> M | Unscored:
    """One schema-bound meta-judge call: the validated reply, `call_failed` when the call failed, or
    `Unscored` when the reply never validated (even after the gateway's re-asks)."""
    try:
        result = await gateway.chat("meta_judge", messages, GenerationConfig(max_tokens=max_tokens), context,
                                    schema=schema, endpoint=endpoint)
    except ModelCallError as exc:
        return call_failed(exc)
    if isinstance(result.parsed, Unparseable):
        return Unscored(f"unparseable: {result.parsed.error}")
    return result.parsed


@dataclass(frozen=True)
class JDEvalReply:
    better_answer: Decision | None
    better_assistant: Preference | None
    answer_reasoning: str = ""
    assistant_reasoning: str = ""
    unscored: Unscored | None = None
    """Why the reply gives no outcome (None when both choices were read)."""


async def jdeval(gateway: Gateway, item: MetaItem, a1: Assessment, a2: Assessment, *,
                 endpoint: str | None = None, max_words: int = REASONING_WORDS, seed: int | None = None) -> JDEvalReply:
    """Tagged JDEval reply: own decision first, then the better assistant (rules stated in the prompt)."""
    messages = render("meta_jdeval", item=item_block(item), assessments=assessments_block(a1, a2),
                      choices=choices_text(item), max_words=max_words)
    try:
        result = await gateway.chat("meta_judge", messages, GenerationConfig(max_tokens=_tokens(2 * max_words), seed=seed),
                                    CallContext(stage="jdeval", item_id=item.id), endpoint=endpoint)
    except ModelCallError as exc:
        return JDEvalReply(None, None, unscored=call_failed(exc))
    raw = (result.text or "")[:500]
    tags = read_tags(result.text or "", JDEVAL_TAGS)
    if tags is None:
        return JDEvalReply(None, None, unscored=Unscored("missing tagged sections", raw))
    answer = match_label(tags["better_answer"], labels_for(item.kind))
    assistant = match_assistant(tags["better_assistant"])
    unscored = (None if answer is not None and assistant is not None
                else Unscored("better_answer / better_assistant not one of the allowed values", raw))
    return JDEvalReply(answer, assistant, tags["answer_reasoning"], tags["assistant_reasoning"], unscored)


class RefereeTurn(BaseModel):
    """A referee turn: end the debate with a verdict, or ask both debaters one question."""

    reasoning: str = Field(description="under 100 words")
    action: Literal["verdict", "question"]
    question: str = ""
    better_answer: str = ""
    verdict: AssistantLabel | None = None

    @model_validator(mode="after")
    def _complete(self) -> RefereeTurn:
        if self.action == "question" and not self.question.strip():
            raise ValueError("action 'question' needs a non-empty question")
        if self.action == "verdict" and self.verdict is None:
            raise ValueError("action 'verdict' needs verdict Assistant1, Assistant2 or equally good")
        return self


class RefereeVerdict(BaseModel):
    """The forced last turn: a verdict only."""

    reasoning: str = Field(description="under 100 words")
    better_answer: str = ""
    verdict: AssistantLabel


async def referee(gateway: Gateway, item: MetaItem, a1: Assessment, a2: Assessment, turns: list[Turn], *,
                  round: int, max_rounds: int, endpoint: str | None = None,
                  max_words: int = REASONING_WORDS) -> RefereeTurn | RefereeVerdict | Unscored:
    """One referee turn; in the last round only a verdict is accepted. Unscored when unreadable."""
    forced = round >= max_rounds
    note = ("This is the last round: give your verdict now (action 'verdict')." if forced
            else "Give your verdict now, or ask one question to both assistants.")
    messages = render("meta_referee", item=item_block(item), assessments=assessments_block(a1, a2),
                      transcript=transcript_text(turns), round=round, max_rounds=max_rounds, round_note=note,
                      max_words=max_words)
    schema: type[RefereeTurn | RefereeVerdict] = RefereeVerdict if forced else RefereeTurn
    return await _structured(gateway, messages, _tokens(2 * max_words),
                             CallContext(stage="referee", round=round, item_id=item.id, hints={"max_rounds": max_rounds}),
                             schema, endpoint)


class JDIReply(BaseModel):
    """JDEval-i: the meta-judge's own judgment of the item, then its grade of the assistant's judgment."""

    own_reasoning: str = Field(description="under 100 words")
    own_decision: str = Field(description="your own decision (or score 1-5) for the task")
    assessment_reasoning: str = Field(description="under 100 words")
    assessment_score: int = Field(ge=1, le=5)


async def jdeval_i(gateway: Gateway, item: MetaItem, a: Assessment, *, endpoint: str | None = None,
                   max_words: int = REASONING_WORDS) -> JDIReply | Unscored:
    own_what = f"decision ({choices_text(item)})" if item.kind != "individual" else "score of the text (1-5)"
    messages = render("meta_jdeval_i", item=item_block(item), assessment=assessment_text(a), own_what=own_what,
                      max_words=max_words)
    return await _structured(gateway, messages, _tokens(2 * max_words), CallContext(stage="jdeval_i", item_id=item.id),
                             JDIReply, endpoint)


class Branches(BaseModel):
    criteria: list[str] = Field(min_length=1, description="1 to 5 short criteria")


class BranchScore(BaseModel):
    reasoning: str = Field(description="under 100 words")
    score: int = Field(ge=1, le=5)


async def bsm_branches(gateway: Gateway, item: MetaItem, a: Assessment, *, endpoint: str | None = None,
                       max_branches: int = MAX_BRANCHES) -> list[str] | Unscored:
    """Sub-criteria chosen by the meta-judge (blank and duplicate ones dropped, at most `max_branches`)."""
    messages = render("meta_bsm_branch", item=item_block(item), assessment=assessment_text(a),
                      max_branches=max_branches)
    reply = await _structured(gateway, messages, 60 + 40 * max_branches,
                              CallContext(stage="bsm_branch", item_id=item.id, hints={"max_branches": max_branches}),
                              Branches, endpoint)
    if isinstance(reply, Unscored):
        return reply
    seen: list[str] = []
    for c in reply.criteria:
        c = " ".join(c.split())
        if c and c.lower() not in {s.lower() for s in seen}:
            seen.append(c)
    return seen[:max_branches] or Unscored("unparseable: no criteria")


async def bsm_solve(gateway: Gateway, item: MetaItem, a: Assessment, criterion: str, *,
                    endpoint: str | None = None, max_words: int = REASONING_WORDS) -> BranchScore | Unscored:
    messages = render("meta_bsm_solve", item=item_block(item), assessment=assessment_text(a), criterion=criterion,
                      max_words=max_words)
    return await _structured(gateway, messages, _tokens(max_words),
                             CallContext(stage="bsm_solve", item_id=item.id, hints={"criterion": criterion}),
                             BranchScore, endpoint)
