"""Deterministic values from a JSON schema, and fitting a behaviour's output to a requested schema.

Covers what pydantic emits: `$defs` + `$ref`, `anyOf` (Optional), `allOf`, enums, `const`, numbers with
bounds, strings with length bounds and common formats, arrays with item bounds, dict-like objects
(`additionalProperties`). Patterns are not honoured (no regex generator); fields with one are rare in
this project's schemas.
"""

from __future__ import annotations

import math
import random
from typing import Any

from examiner.simulator.prose import filler_words

_MAX_DEPTH = 8


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref` pointers of the form `#/$defs/Name` (or any `#/a/b` path) within `root`."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 32:
        ref = node["$ref"]
        if not ref.startswith("#"):
            return {}
        target: Any = root
        for part in ref.lstrip("#").strip("/").split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part, {}) if isinstance(target, dict) else {}
        extra = {k: v for k, v in node.items() if k != "$ref"}
        node = {**target, **extra} if extra else target
        seen += 1
    return node if isinstance(node, dict) else {}


def _pick_type(node: dict[str, Any]) -> str | None:
    kind = node.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        return non_null[0] if non_null else "null"
    return kind


def _fake_string(node: dict[str, Any], rng: random.Random) -> str:
    fmt = node.get("format")
    if fmt == "date-time":
        return f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T12:00:00Z"
    if fmt == "date":
        return f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    if fmt == "email":
        return f"user{rng.randint(1, 999)}@example.org"
    if fmt in ("uri", "url"):
        return f"https://example.org/item/{rng.randint(1, 999)}"
    if fmt == "uuid":
        return "%08x-0000-4000-8000-%012x" % (rng.getrandbits(32), rng.getrandbits(48))
    min_len = int(node.get("minLength", 0))
    max_len = node.get("maxLength")
    text = filler_words(rng, rng.randint(3, 8))
    while len(text) < min_len:
        text += " " + filler_words(rng, 4)
    if max_len is not None:
        text = text[: int(max_len)].rstrip() or text[: int(max_len)]
        if len(text) < min_len:
            text = (text + "x" * min_len)[:min_len]
    return text


def _fake_number(node: dict[str, Any], rng: random.Random, integer: bool) -> int | float:
    low = node.get("minimum")
    high = node.get("maximum")
    if node.get("exclusiveMinimum") is not None:
        ex = node["exclusiveMinimum"]
        low = (ex + 1) if integer else ex + 1e-6
    if node.get("exclusiveMaximum") is not None:
        ex = node["exclusiveMaximum"]
        high = (ex - 1) if integer else ex - 1e-6
    if low is None and high is None:
        low, high = 0, 10
    elif low is None:
        low = high - 10
    elif high is None:
        high = low + 10
    if integer:
        return rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
    return round(rng.uniform(float(low), float(high)), 3) if high > low else float(low)


def fake_value(schema: dict[str, Any], rng: random.Random, root: dict[str, Any] | None = None,
               depth: int = 0) -> Any:
    """A value valid for `schema`, chosen deterministically by `rng`."""
    root = schema if root is None else root
    node = _resolve(schema, root)
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return rng.choice(node["enum"])
    for key in ("anyOf", "oneOf"):
        if node.get(key):
            options = [_resolve(o, root) for o in node[key]]
            non_null = [o for o in options if _pick_type(o) != "null"]
            return fake_value((non_null or options)[0], rng, root, depth + 1)
    if node.get("allOf"):
        merged: dict[str, Any] = {}
        for part in node["allOf"]:
            part = _resolve(part, root)
            merged = {**merged, **part,
                      "properties": {**merged.get("properties", {}), **part.get("properties", {})},
                      "required": [*merged.get("required", []), *part.get("required", [])]}
        rest = {k: v for k, v in node.items() if k != "allOf"}
        return fake_value({**merged, **rest}, rng, root, depth + 1)
    kind = _pick_type(node)
    if kind is None:
        kind = "object" if "properties" in node else ("array" if "items" in node else "string")
    if kind == "string":
        return _fake_string(node, rng)
    if kind == "integer":
        return _fake_number(node, rng, integer=True)
    if kind == "number":
        return _fake_number(node, rng, integer=False)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        low = int(node.get("minItems", 0))
        high = node.get("maxItems")
        high = int(high) if high is not None else max(low, 3)
        count = low if depth >= _MAX_DEPTH else rng.randint(max(low, min(1, high)), max(low, min(high, low + 3)))
        items = node.get("items", {})
        if isinstance(items, list):  # tuple form
            return [fake_value(i, rng, root, depth + 1) for i in items]
        prefix = node.get("prefixItems")
        if prefix:
            return [fake_value(i, rng, root, depth + 1) for i in prefix]
        return [fake_value(items, rng, root, depth + 1) for _ in range(count)]
    if kind == "object":
        props: dict[str, Any] = node.get("properties", {})
        required = set(node.get("required", props.keys() if node.get("additionalProperties") is False else []))
        out: dict[str, Any] = {}
        for name, sub in props.items():
            if depth >= _MAX_DEPTH and name not in required:
                continue
            out[name] = fake_value(sub, rng, root, depth + 1)
        extra = node.get("additionalProperties")
        if not props and isinstance(extra, dict) and depth < _MAX_DEPTH:
            for i in range(max(int(node.get("minProperties", 0)), 2)):
                out[f"key{i + 1}"] = fake_value(extra, rng, root, depth + 1)
        return out
    return filler_words(rng, 3)


def conform(value: Any, schema: dict[str, Any], rng: random.Random, root: dict[str, Any] | None = None,
            depth: int = 0) -> Any:
    """`value` made to fit `schema` with the least change: keep what is there, fake what is missing.

    Lets a behaviour return its conventional fields (e.g. `verdicts`) while an agent's schema adds
    fields the behaviour does not know about; known values are never replaced.
    """
    root = schema if root is None else root
    node = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if node.get(key):
            options = [_resolve(o, root) for o in node[key]]
            if value is None and any(_pick_type(o) == "null" for o in options):
                return None
            non_null = [o for o in options if _pick_type(o) != "null"]
            return conform(value, (non_null or options)[0], rng, root, depth + 1)
    kind = _pick_type(node)
    if kind == "object" or (kind is None and "properties" in node):
        if not isinstance(value, dict):
            return fake_value(node, rng, root, depth)
        props: dict[str, Any] = node.get("properties", {})
        out: dict[str, Any] = {}
        for name, sub in props.items():
            out[name] = conform(value[name], sub, rng, root, depth + 1) if name in value else \
                fake_value(sub, rng, root, depth + 1)
        if node.get("additionalProperties") is not False:
            for name, item in value.items():
                out.setdefault(name, item)
        return out
    if kind == "array":
        if not isinstance(value, list):
            return fake_value(node, rng, root, depth)
        items = node.get("items", {})
        if isinstance(items, dict):
            return [conform(v, items, rng, root, depth + 1) for v in value]
        return value
    if node.get("enum") and value not in node["enum"]:
        return fake_value(node, rng, root, depth)
    if kind == "string" and not isinstance(value, str):
        return fake_value(node, rng, root, depth)
    if kind == "integer" and not (isinstance(value, int) and not isinstance(value, bool)):
        return fake_value(node, rng, root, depth)
    if kind == "number" and not (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return fake_value(node, rng, root, depth)
    if kind == "boolean" and not isinstance(value, bool):
        return fake_value(node, rng, root, depth)
    return value
