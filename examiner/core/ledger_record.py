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

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SerializerFunctionWrapHandler, model_serializer
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

    _keys: tuple[str, ...] | None = PrivateAttr(default=None)
    """The fields given, in the order given: what is written, in that order (None for a record read from a
    JSON line until it is first asked for: read from `_line` then)."""
    _line: str | bytes | bytearray | None = PrivateAttr(default=None)
    """The JSON line a record was read from (`model_validate_json`)."""

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:
        """pydantic's `model_validate`, keeping the order of a mapping's keys (what is written back)."""
        record = super().model_validate(obj, **options)
        if isinstance(obj, Mapping):
            record._private()["_keys"] = tuple(obj)
        return record

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **options: Any) -> Self:
        """pydantic's `model_validate_json`, keeping the line: the order of its keys is read from it when it
        is needed (a record written back or asked what it `has`), not for every line read. A model validator
        that kept the order made pydantic turn every line into Python objects before validating it, the
        slower read this replaced."""
        record = super().model_validate_json(json_data, **options)
        record._private()["_line"] = json_data
        return record

    def _private(self) -> dict[str, Any]:
        private = self.__pydantic_private__
        assert private is not None  # the model has private attributes: pydantic always sets them
        return private

    def _given(self) -> tuple[str, ...]:
        """The fields given, in order: as validated from a mapping, as in the JSON line read, or (a record
        pydantic built some other way, e.g. nested in another model) the fields set, then the extra ones."""
        private = self._private()
        keys: tuple[str, ...] | None = private["_keys"]
        if keys is None:
            line = private["_line"]
            if line is not None:
                keys = tuple(json.loads(line))
            else:
                keys = (*(name for name in type(self).model_fields if name in self.model_fields_set),
                        *(self.__pydantic_extra__ or {}))
            private["_keys"], private["_line"] = keys, None
        return keys

    def __eq__(self, other: object) -> bool:
        """Equal values and the same fields given, in the same order (as when `_keys` was always set)."""
        if not isinstance(other, LedgerRecord):
            return NotImplemented
        return (type(self) is type(other) and self.__dict__ == other.__dict__
                and self.__pydantic_extra__ == other.__pydantic_extra__ and self._given() == other._given())

    @model_serializer(mode="wrap")
    def _given_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        return {key: out[key] for key in self._given() if key in out}

    def fields(self) -> dict[str, Any]:
        """The fields the record was given, in order, as Python values (what its JSON line holds). Read
        straight from the instance: it is what every ledger write serialises, several times faster than
        `model_dump`."""
        named, extra = self.__dict__, self.__pydantic_extra__ or {}
        return {key: named[key] if key in named else extra[key] for key in self._given()}

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
        return name in self._given()

    @property
    def token_counts(self) -> dict[str, int]:
        """The token counts, by field name (the details are parts of prompt and completion tokens)."""
        return {"prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                "cache_write_tokens": self.cache_write_tokens, "completion_tokens": self.completion_tokens,
                "reasoning_tokens": self.reasoning_tokens}


__all__ = ["LedgerRecord", "Outcome"]
