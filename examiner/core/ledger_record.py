"""One line of a run's cost ledger (ledger.jsonl), as a typed record: `LedgerRecord`.

examiner.llm.ledger says what the records mean (write-ahead `started`, outcomes, `lost` attempts) and
examiner.llm writes them; the model sits here, beside the other run records, because the run directory
(examiner.core.rundir) reads the ledger for every report and core cannot import the llm layer.

The JSON on disk is the one examiner wrote before the record was typed, byte for byte: a record keeps the
fields it was given, in the order given (`then` adds fields as `dict(record, **fields)` did), and leaves
out those it was not given; a field an older ledger lacks reads as its default here (0, False, "", "ok"
for the outcome), as the dict readers read it. Fields this model does not name (a ledger from a later
version) are kept as they are and written back when a resume copies a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, PrivateAttr, SerializerFunctionWrapHandler,
                      ValidatorFunctionWrapHandler, model_serializer, model_validator)
from typing_extensions import Self

from examiner.core.stages import Stage

Outcome = Literal["started", "ok", "failed", "reconciled", "unknown", "cancelled", "lost"]
"""What a record says of its request: `started` (write-ahead, about to be sent), an outcome (`ok`,
`failed`, `reconciled`, `unknown`, `cancelled`) or `lost` (one attempt possibly billed, its reply lost)."""


class LedgerRecord(BaseModel):
    """One ledger line: who made the request and why, where it went, and what it used and cost."""

    model_config = ConfigDict(frozen=True, extra="allow")

    # who and why (examiner.llm.call.CallMeta)
    role: str = ""
    stage: Stage | str = Field("", union_mode="left_to_right")
    """A registered stage; a name an older ledger used that is no longer registered reads as its text."""
    round: int | None = 0
    unit_ids: list[str] = Field(default_factory=list)
    item_id: str = ""
    call_id: str = ""
    repair: int = 0
    """Failed (reply, correction) pairs before this re-ask (written only on a re-ask)."""
    # where it went
    run_id: str = ""
    endpoint: str = ""
    replica: str = ""
    model: str = ""
    """The configured model (the endpoint's settings)."""
    reply_model: str = ""
    """The model the server said answered, where it named one."""
    request_id: str = ""
    ts: float | None = None
    outcome: Outcome = "ok"
    # what it used and cost
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    usage_source: str = ""
    batch: bool = False
    cost_usd: float = 0.0
    cache_hit: bool = False
    """Answered from examiner's own response cache: nothing sent, nothing paid."""
    latency_s: float = 0.0
    attempts: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    reported_usage: dict[str, Any] | None = None
    """The usage the server reported, where it was implausible and the worst case was booked instead."""
    # write-ahead, lost and stopped requests
    worst_case_usd: float = 0.0
    reserved_usd: float = 0.0
    cache_key: str | None = None
    status: str = ""
    """A `lost` attempt's status (timeout, connection, ...)."""
    stopped: str = ""
    """Why the budget stopped a `failed` request between two attempts."""

    _keys: tuple[str, ...] = PrivateAttr(default=())
    """The fields given, in the order given: what is written, in that order."""

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Self:
        record: Self = handler(data)
        if isinstance(data, Mapping):
            record._keys = tuple(data)
        return record

    @model_serializer(mode="wrap")
    def _given_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        return {key: out[key] for key in self._keys if key in out}

    def fields(self) -> dict[str, Any]:
        """The fields the record was given, in order, as Python values (what its JSON line holds). Read
        straight from the instance: it is what every ledger write serialises, several times faster than
        `model_dump`."""
        named, extra = self.__dict__, self.__pydantic_extra__ or {}
        return {key: named[key] if key in named else extra[key] for key in self._keys}

    @classmethod
    def build(cls, **fields: Any) -> Self:
        """A new record of exactly these fields, in this order."""
        return cls.model_validate(cls._named(fields))

    def then(self, **fields: Any) -> Self:
        """This record with `fields` set: fields it has change in place, new ones follow its own (what
        `dict(record, **fields)` gave when records were dicts)."""
        return type(self).model_validate({**self.fields(), **self._named(fields)})

    @classmethod
    def _named(cls, fields: dict[str, Any]) -> dict[str, Any]:
        """`fields`, or a TypeError for a name the model lacks: a typo must not reach the ledger as an extra
        field (extras are only kept from a ledger read back)."""
        unknown = set(fields) - set(cls.model_fields)
        if unknown:
            raise TypeError(f"ledger records have no field(s) {sorted(unknown)}")
        return fields

    def without(self, *names: str) -> Self:
        """This record less some of its fields (they read as their defaults again)."""
        return type(self).model_validate({k: v for k, v in self.fields().items() if k not in names})

    def has(self, name: str) -> bool:
        """Whether the record was given `name` (an older ledger may lack a field that reads as its default)."""
        return name in self._keys

    @property
    def token_counts(self) -> dict[str, int]:
        """The token counts, by field name (the details are parts of prompt and completion tokens)."""
        return {"prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                "cache_write_tokens": self.cache_write_tokens, "completion_tokens": self.completion_tokens,
                "reasoning_tokens": self.reasoning_tokens}


__all__ = ["LedgerRecord", "Outcome"]
