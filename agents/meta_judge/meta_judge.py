"""Meta-judge role: judges the evaluators' judgments (JDEval, JDEval-i, BSMEval). The referee of a
debate (MDEval) is an agent of its own: agents/referee/.

Each function makes one model call and returns what the meta-judge said, or `Unscored` with the reason
when the reply could not be read or the call itself failed (`call_failed`); the caller counts it and
leaves it out, it never becomes a tie.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel, Field

from examiner.agents.card import AgentCard, Prompt
from examiner.agents.meta_reply import REASONING_WORDS, reasoning_tokens, schema_reply
from examiner.agents.prompting.meta_blocks import (
    JDEVAL_TAGS,
    assessment_text,
    assessments_block,
    choices_text,
    item_block,
    match_assistant,
    match_label,
    read_tags,
)
from examiner.core.assessments import Assessment, Decision, MetaItem, labels_for
from examiner.core.labels import Preference, Unscored, call_failed
from examiner.llm import CallContext, Gateway, GenerationConfig, ModelCallError

ROLE = "meta_judge"
MAX_BRANCHES = 5


def _two_reasonings(words: int) -> int:
    """max_tokens of a reply with two reasonings of `words` words each."""
    return reasoning_tokens(2 * words)


def branch_tokens(max_branches: int) -> int:
    """max_tokens of a list of up to `max_branches` short criteria."""
    return 60 + 40 * max_branches


@dataclass(frozen=True)
class JDEvalReply:
    better_answer: Decision | None
    better_assistant: Preference | None
    answer_reasoning: str = ""
    assistant_reasoning: str = ""
    unscored: Unscored | None = None
    """Why the reply gives no outcome (None when both choices were read)."""


class JDIReply(BaseModel):
    """JDEval-i: the meta-judge's own judgment of the item, then its grade of the assistant's judgment."""

    own_reasoning: str = Field(description="under 100 words")
    own_decision: str = Field(description="your own decision (or score 1-5) for the task")
    assessment_reasoning: str = Field(description="under 100 words")
    assessment_score: int = Field(ge=1, le=5)


class Branches(BaseModel):
    criteria: list[str] = Field(min_length=1, description="1 to 5 short criteria")


class BranchScore(BaseModel):
    reasoning: str = Field(description="under 100 words")
    score: int = Field(ge=1, le=5)


JDEVAL = Prompt.of("meta_jdeval", "item", "assessments", "choices", "max_words", generation=GenerationConfig(),
                   max_tokens=_two_reasonings, sized_by="reasonings' word limit")
JDEVAL_I = Prompt.of("meta_jdeval_i", "item", "assessment", "own_what", "max_words", generation=GenerationConfig(),
                     max_tokens=_two_reasonings, sized_by="reasonings' word limit")
BSM_BRANCH = Prompt.of("meta_bsm_branch", "item", "assessment", "max_branches", generation=GenerationConfig(),
                       max_tokens=branch_tokens, sized_by="number of criteria")
BSM_SOLVE = Prompt.of("meta_bsm_solve", "item", "assessment", "criterion", "max_words", generation=GenerationConfig(),
                      max_tokens=reasoning_tokens, sized_by="reasoning's word limit")
CARD = AgentCard(agent="meta_judge", name="meta-judge", role=ROLE, prompts=(JDEVAL, JDEVAL_I, BSM_BRANCH, BSM_SOLVE),
                 reply_schemas=(JDIReply, Branches, BranchScore),
                 text_reply="meta_jdeval: the tagged sections " + ", ".join(JDEVAL_TAGS)
                            + " (agents/prompting/meta_blocks.read_tags)")


async def jdeval(gateway: Gateway, item: MetaItem, a1: Assessment, a2: Assessment, *,
                 endpoint: str | None = None, max_words: int = REASONING_WORDS, seed: int | None = None) -> JDEvalReply:
    """Tagged JDEval reply: own decision first, then the better assistant (rules stated in the prompt)."""
    cap = gateway.settings.max_passed_chars  # what models wrote goes in cut to this (core/passed_text.py)
    messages = JDEVAL.render(item=item_block(item, limit=cap), assessments=assessments_block(a1, a2, limit=cap),
                             choices=choices_text(item), max_words=max_words)
    try:
        result = await gateway.chat(CARD.role, messages, replace(JDEVAL.config(max_words), seed=seed),
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


async def jdeval_i(gateway: Gateway, item: MetaItem, a: Assessment, *, endpoint: str | None = None,
                   max_words: int = REASONING_WORDS) -> JDIReply | Unscored:
    own_what = f"decision ({choices_text(item)})" if item.kind != "individual" else "score of the text (1-5)"
    cap = gateway.settings.max_passed_chars  # what models wrote goes in cut to this (core/passed_text.py)
    messages = JDEVAL_I.render(item=item_block(item, limit=cap), assessment=assessment_text(a, limit=cap), own_what=own_what,
                               max_words=max_words)
    return await schema_reply(gateway, CARD.role, messages, JDEVAL_I.config(max_words),
                              CallContext(stage="jdeval_i", item_id=item.id), JDIReply, endpoint)


async def bsm_branches(gateway: Gateway, item: MetaItem, a: Assessment, *, endpoint: str | None = None,
                       max_branches: int = MAX_BRANCHES) -> list[str] | Unscored:
    """Sub-criteria chosen by the meta-judge (blank and duplicate ones dropped, at most `max_branches`)."""
    cap = gateway.settings.max_passed_chars  # what models wrote goes in cut to this (core/passed_text.py)
    messages = BSM_BRANCH.render(item=item_block(item, limit=cap), assessment=assessment_text(a, limit=cap), max_branches=max_branches)
    reply = await schema_reply(gateway, CARD.role, messages, BSM_BRANCH.config(max_branches),
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
    cap = gateway.settings.max_passed_chars  # what models wrote goes in cut to this (core/passed_text.py)
    messages = BSM_SOLVE.render(item=item_block(item, limit=cap), assessment=assessment_text(a, limit=cap), criterion=criterion,
                                max_words=max_words)
    return await schema_reply(gateway, CARD.role, messages, BSM_SOLVE.config(max_words),
                              CallContext(stage="bsm_solve", item_id=item.id, hints={"criterion": criterion}),
                              BranchScore, endpoint)


__all__ = ["CARD", "MAX_BRANCHES", "REASONING_WORDS", "BranchScore", "Branches", "JDEvalReply", "JDIReply",
           "bsm_branches", "bsm_solve", "jdeval", "jdeval_i"]
