"""A question through the gate before any target is asked it: accepted as it is, or rewritten once with
the gate's reasons as feedback and checked again; a question rejected twice is recorded `gate_rejected`
and never asked, so its units stay uncovered and go back to the pool of the next round.

Within a round, chains reach the gate in the order their calls finish, so which of two near-copies
written in the same round is kept can differ from run to run (the first to be embedded); every other check
reads one question alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from examiner.core.records import QuestionRecord
from examiner.exam.gate.gate import GateOutcome, gate_question
from examiner.exam.nodes.context import ExamContext

Rewrite = Callable[[str], Awaitable[QuestionRecord | None]]
"""Writes the cluster's question again with this feedback; None when the examiner gave no usable draft."""


def _with(record: QuestionRecord, outcome: GateOutcome, *, status: str, rewrites: int,
          draft: tuple[str, GateOutcome] | None = None) -> QuestionRecord:
    update = {"gate": outcome.records(), "guessable": outcome.guessable, "gate_rewrites": rewrites, "status": status}
    if draft is not None:
        update |= {"gate_draft": draft[0], "gate_draft_checks": draft[1].records()}
    return record.model_copy(update=update)


async def gated(ctx: ExamContext, units: Sequence[tuple[str, str]], record: QuestionRecord, rnd: int,
                rewrite: Rewrite) -> QuestionRecord:
    """`record` checked by the gate (examiner/exam/gate/gate.py) when it is on and the question is usable;
    a rejected one rewritten once. The record carries the checks of the question finally kept (or of the
    rewrite that was rejected too), and after a rewrite the rejected draft with its checks."""
    exam = ctx.exam
    if not exam.question_gate or record.status != "ok":
        return record
    first = await gate_question(ctx, units, record.text, record.targets, rnd)
    if not first.failed(exam.gate_drop_guessable):
        return _with(record, first, status="ok", rewrites=0)
    again = await rewrite(first.feedback(exam.gate_drop_guessable))
    if again is None or again.status != "ok":
        return _with(record, first, status="gate_rejected", rewrites=1)
    second = await gate_question(ctx, units, again.text, again.targets, rnd, attempt=1)
    if second.failed(exam.gate_drop_guessable):
        return _with(again, second, status="gate_rejected", rewrites=1, draft=(record.text, first))
    return _with(again, second, status="ok", rewrites=1, draft=(record.text, first))


__all__ = ["Rewrite", "gated"]
