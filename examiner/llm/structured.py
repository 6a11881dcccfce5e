"""Structured output: how to ask for JSON, and how to read it back tolerantly without inventing values.

Repairs are purely syntactic (code fences, prose around the object, trailing commas, single quotes,
a cut-off tail closed with the brackets it opened). If the repaired text still fails the pydantic
schema, the caller re-asks the model with the validation error; it never fills in missing fields.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

StructuredMode = Literal["json_schema", "json_object_schema", "json_object", "text"]

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


@lru_cache(maxsize=512)
def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """`schema`'s JSON schema, generated once per class: pydantic generates it anew on every call (1.3 ms a
    call under cProfile in a simulated exam). Callers must not change the dict they get."""
    return schema.model_json_schema()


def response_format(schema: type[BaseModel], mode: StructuredMode) -> dict[str, Any] | None:
    """The `response_format` request field for `schema` in the endpoint's structured-output mode."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": json_schema(schema), "strict": False},
        }
    if mode == "json_object_schema":
        # llama.cpp / llama-cpp-python servers: JSON mode with the schema compiled to a grammar.
        return {"type": "json_object", "schema": json_schema(schema)}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def schema_instruction(schema: type[BaseModel]) -> str:
    """A plain-text reminder of the expected JSON, for endpoints that cannot enforce a schema."""
    return (
        "Reply with one JSON object only, no prose, matching this JSON schema:\n"
        + json.dumps(json_schema(schema), separators=(",", ":"))
    )


def _balanced_close(text: str) -> str:
    """Close strings and brackets left open by a truncated JSON text."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
    tail = '"' if in_string else ""
    repaired = (text + tail).rstrip()
    repaired = re.sub(r",\s*$", "", repaired)
    repaired = re.sub(r":\s*$", ": null", repaired)
    return repaired + "".join(reversed(stack))


def _candidates(text: str) -> list[str]:
    stripped = text.strip()
    found = [stripped]
    fence = _FENCE.search(stripped)
    if fence:
        found.append(fence.group(1).strip())
    start = stripped.find("{")
    if start >= 0:
        end = stripped.rfind("}")
        if end > start:
            found.append(stripped[start : end + 1])
        found.append(stripped[start:])
    return found


def extract_json(text: str, *, allow_truncated: bool = True) -> Any:
    """The first JSON value recoverable from `text`; raises ValueError when none is.

    `allow_truncated=False` refuses to close a cut-off object (used when the endpoint said the reply
    hit max_tokens: closing it would turn a partial answer into a plausible-looking complete one)."""
    for candidate in _candidates(text):
        for variant in (
            candidate,
            _TRAILING_COMMA.sub(r"\1", candidate),
            _TRAILING_COMMA.sub(r"\1", candidate.replace("'", '"')),
        ):
            try:
                return json.loads(variant)
            except json.JSONDecodeError:
                pass
    start = text.find("{")
    if start >= 0 and allow_truncated:
        try:
            return json.loads(_TRAILING_COMMA.sub(r"\1", _balanced_close(text[start:])))
        except json.JSONDecodeError:
            pass
    raise ValueError("no JSON object found in the reply")


def parse_structured(
    text: str, schema: type[BaseModel], *, truncated: bool = False
) -> tuple[BaseModel | None, str]:
    """(validated object, "") or (None, a short description of what was wrong)."""
    if not text.strip():
        return None, "the reply was empty"
    try:
        data = extract_json(text, allow_truncated=not truncated)
    except ValueError as exc:
        if truncated:
            return None, "the reply was cut off before the JSON object was complete; answer more briefly"
        return None, str(exc)
    try:
        return schema.model_validate(data), ""
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'object'}: {err['msg']}" for err in exc.errors()[:5]
        )
        return None, f"the JSON did not match the schema ({problems})"
