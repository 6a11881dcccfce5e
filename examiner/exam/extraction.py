"""`llm` unit mode: the examiner condenses passages into statements, and no passage is lost silently.

Passages go in batches sized so that the expected reply fits the examiner's output limit
(roles/extractor.py: EXTRACT_MAX_TOKENS / REPLY_TOKENS_PER_PASSAGE_TOKEN passage tokens per batch, and
the prompt plus the reply within the examiner's context window). Passages are shown with their number in
the batch (1, 2, ...), not their hash ids, which a small model cannot copy; a lone passage owns every
statement of its reply. A reply that is cut at the limit or
cannot be parsed splits its batch in two halves, each asked again, down to single passages; passages
of a usable reply that got no statement are asked again one by one. A passage that still yields no
statement is a `SkippedPassage` (document, passage id, reason), recorded in run.json and counted in the
reports: never replaced by something the model did not say.

A call that fails for good (an endpoint that times out or errors past its retries) is a model failure,
not a bug: the run stops `incomplete` (some calls failed) or `failed` (all did) with one line, as every
exam node stops (nodes.context.stop_update), and `resume` extracts again, the cache answering every call
that succeeded.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from examiner.corpus.reading import Corpus, Passage
from examiner.core.tokens import count_tokens
from examiner.core.errors import BudgetExhausted
from examiner.exam.nodes.context import ExamContext, stop_update
from examiner.agents.examiner.extractor import EXTRACT_MAX_TOKENS, REPLY_TOKENS_PER_PASSAGE_TOKEN, extract_statements
from examiner.llm.fanout import run_bounded

log = logging.getLogger(__name__)

PROMPT_OVERHEAD_TOKENS = 200
"""The extraction prompt's own words and the passage tags, added to a batch's passage tokens."""


@dataclass(frozen=True)
class SkippedPassage:
    """A passage the examiner drew no statement from, and why."""

    document: str
    passage_id: str
    reason: str


@dataclass
class Extracted:
    """What one batch gave: (passage, statement) pairs, skipped passages, statements naming no passage
    of the batch."""

    found: list[tuple[Passage, str]]
    skipped: list[SkippedPassage]
    unknown: int = 0
    stop: dict[str, str] = field(default_factory=dict)
    """The run's stop when extraction calls failed for good (status `incomplete` or `failed` and its
    reason); empty when every batch was answered."""


def batch_budget(context_tokens: int, max_tokens: int = EXTRACT_MAX_TOKENS) -> int:
    """Passage tokens per extraction call: the expected reply must fit `max_tokens`, and the prompt plus
    the reply the model's context window."""
    by_reply = int(max_tokens / REPLY_TOKENS_PER_PASSAGE_TOKEN)
    by_context = context_tokens - max_tokens - PROMPT_OVERHEAD_TOKENS
    return max(1, min(by_reply, by_context))


def batches(passages: list[Passage], budget: int) -> list[list[Passage]]:
    """Consecutive passages, at most `budget` tokens per batch (a longer passage goes alone)."""
    out: list[list[Passage]] = [[]]
    size = 0
    for passage in passages:
        tokens = count_tokens(passage.text)
        if out[-1] and size + tokens > budget:
            out.append([])
            size = 0
        out[-1].append(passage)
        size += tokens
    return [batch for batch in out if batch]


async def extract_batch(ctx: ExamContext, batch: list[Passage]) -> Extracted:
    """Statements of one batch; a cut or unusable reply splits the batch, down to single passages."""
    by_id = {str(number): p for number, p in enumerate(batch, start=1)}
    reply = await extract_statements(ctx.gateway, [(number, p.text) for number, p in by_id.items()])
    if reply.problem:
        if len(batch) == 1:
            return Extracted([], [SkippedPassage(batch[0].document, batch[0].id, reply.problem)])
        half = len(batch) // 2
        return merge([await extract_batch(ctx, batch[:half]), await extract_batch(ctx, batch[half:])])
    if len(batch) == 1:  # a lone passage owns every statement, whatever id the reply gave it
        by_id = {s.passage_id: batch[0] for s in reply.statements}
    found = [(by_id[s.passage_id], s.text.strip()) for s in reply.statements
             if s.passage_id in by_id and s.text.strip()]
    unknown = len(reply.statements) - len(found)
    named = {p.id for p, _ in found}
    missing = [p for p in batch if p.id not in named]
    if len(batch) == 1:
        skipped = [SkippedPassage(p.document, p.id, "the reply held no statement from this passage") for p in missing]
        return Extracted(found, skipped, unknown)
    again = [await extract_batch(ctx, [p]) for p in missing]
    return merge([Extracted(found, [], unknown), *again])


def merge(parts: list[Extracted]) -> Extracted:
    return Extracted([pair for x in parts for pair in x.found], [s for x in parts for s in x.skipped],
                     sum(x.unknown for x in parts))


async def extract_corpus(ctx: ExamContext, corpus: Corpus) -> Extracted:
    """Every passage's statements, batches in parallel (runtime policy). A budget stop or a failed call
    ends the run: the units are the start of the exam. A budget stop raises BudgetExhausted; calls that
    failed for good give an Extracted whose `stop` says how the run ends (module docstring)."""
    _, spec = ctx.settings.endpoint_for("examiner")
    todo = batches(corpus.passages, batch_budget(spec.context_tokens))
    with ctx.progress.stage(0, "extract units", len(todo), 0) as tick:
        summary = await run_bounded(todo, lambda b: extract_batch(ctx, b), on_done=lambda _: tick.advance())
    if summary.budget_stopped:
        raise BudgetExhausted("budget exhausted during unit extraction")
    if summary.failed:
        return Extracted([], [], stop=stop_update(summary, "unit extraction"))
    result = merge(list(summary.values))
    if result.unknown:
        log.warning("ignored %d extracted statements naming an unknown passage", result.unknown)
    if result.skipped:
        log.warning("%d of %d passages gave no knowledge unit (listed in run.json as skipped_passages)",
                    len(result.skipped), len(corpus.passages))
    return result
