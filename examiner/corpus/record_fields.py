"""The value a field key names in a dataset record, read one way by every command that takes --*-field
flags (`examiner judge`, `judge-stats`, `metric-stats`): a key present as such, else a dotted key read down
nested objects (`scores.coherence` is record["scores"]["coherence"]), so a key a command accepts is
never silently missing in another."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def field_value(obj: Mapping[str, Any], key: str) -> Any:
    """obj[key], or for a dotted key not present as such, the value down that path (None when absent)."""
    if key in obj:
        return obj[key]
    value: Any = obj
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


__all__ = ["field_value"]
