"""Who makes a request and why, as the gateway's parts pass it along: `CallMeta`.

The ledger records its fields; only a simulated endpoint receives them as request metadata
(examiner.llm.providers); a real endpoint gets the request body alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from examiner.core.ledger_record import LedgerRecord
from examiner.llm.types import CallContext

_LEDGER_STAGE: ContextVar[str | None] = ContextVar("examiner_ledger_stage", default=None)


@contextmanager
def ledger_stage(stage: str) -> Iterator[None]:
    """Record every call made inside this block (and in the tasks it starts) under `stage` in the ledger.

    Why: a method may call an existing role or judge object for a purpose of its own (the exam's judge
    self-check re-judges answers through the run's judge) and its cost must show apart in `examiner cost
    --by stage`. Only the ledger's `stage` changes: the request (its simulator metadata included) is the
    one the role would send, so the endpoint answers it as it answers the role."""
    token = _LEDGER_STAGE.set(stage)
    try:
        yield
    finally:
        _LEDGER_STAGE.reset(token)


def _new_call_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class CallMeta:
    """One request's role, context and ledger identity. A re-ask of a call shares its call id and says
    how many failed (reply, correction) pairs precede it (`repair`)."""

    role: str
    context: CallContext
    ledger_stage: str = ""
    """The stage the ledger records: the enclosing `ledger_stage` block's, else the context's."""
    call_id: str = field(default_factory=_new_call_id)
    repair: int = 0

    @classmethod
    def for_call(cls, role: str, context: CallContext) -> "CallMeta":
        """A new call of `role`, its ledger stage taken from the enclosing `ledger_stage` block if any."""
        return cls(role, context, _LEDGER_STAGE.get() or context.stage)

    def repaired(self, repair: int) -> "CallMeta":
        """The metadata of this call's `repair`-th re-ask."""
        return replace(self, repair=repair)

    def adopting(self, call_id: str) -> "CallMeta":
        """This call under the id of a request a killed process started for it (see examiner.llm.batch)."""
        return replace(self, call_id=call_id)

    @property
    def bound_key(self) -> tuple[str, str]:
        """What a completion bound is learned for (examiner.llm.budget): the role and the ledger stage."""
        return self.role, self.ledger_stage

    def ledger_record(self) -> LedgerRecord:
        """The fields every ledger record of this request starts with (`repair` only on a re-ask)."""
        repair = {"repair": self.repair} if self.repair else {}
        return LedgerRecord.build(role=self.role, stage=self.ledger_stage, round=self.context.round,
                                  unit_ids=list(self.context.unit_ids), item_id=self.context.item_id,
                                  call_id=self.call_id, **repair)

    def hints(self) -> dict[str, object]:
        """The call's facts for a test backend: the context's hints, its round and the repair count."""
        hints: dict[str, object] = dict(self.context.hints)
        if self.context.round:
            hints.setdefault("round", self.context.round)
        if self.repair:
            hints["repair"] = self.repair
        return hints


__all__ = ["CallMeta", "ledger_stage"]
