"""Calls of the public API with arguments a function does not take: one clear line instead of Python's
bare TypeError.

Why: `run_exam(config={...})` used to end in "run_exam() got an unexpected keyword argument 'config'",
which says neither what the function takes nor where the settings go. Each public function, as
examiner.api hands it out, first binds its arguments to its signature; a mismatch becomes a CallError
(a UserError and a TypeError) naming what it takes and the likely meant name. The function itself runs
unchanged, so a TypeError raised inside it is never mistaken for a bad call.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from examiner.core.errors import CallError

F = TypeVar("F", bound=Callable[..., Any])

SYNONYMS: Mapping[str, str] = {"config": "settings", "configuration": "settings", "cfg": "settings",
                               "conf": "settings", "options": "options", "opts": "options"}
"""Keywords people reach for, and the parameter they mean."""


def _options_type(func: Callable[..., Any]) -> type | None:
    """The options class of the function's first parameter (a pydantic model), if it has one."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # an unresolvable annotation: no hint about fields, the message still helps
        return None
    first = next(iter(inspect.signature(func).parameters), None)
    kind = hints.get(first) if first else None
    return kind if isinstance(kind, type) and hasattr(kind, "model_fields") else None


def _takes(func: Callable[..., Any], options: type | None) -> str:
    """`run_exam() takes ExamOptions (and settings=)`: what the function takes, in words."""
    params = list(inspect.signature(func).parameters.values())
    first = options.__name__ if options is not None else (params[0].name if params else "nothing")
    rest = [f"{p.name}=" for p in params[1:] if p.kind is not inspect.Parameter.VAR_KEYWORD]
    return f"{func.__name__}() takes {first}" + (f" (and {', '.join(rest)})" if rest else "")


def _hint(func: Callable[..., Any], options: type | None, keyword: str) -> str:
    """What the unknown `keyword` probably meant: a parameter, or a field of the options."""
    params = list(inspect.signature(func).parameters)
    meant = SYNONYMS.get(keyword.lower())
    if meant == "options" and params:
        meant = params[0]
    if meant not in params:
        close = difflib.get_close_matches(keyword, params, n=1)
        meant = close[0] if close else None
    if meant is not None:
        return f" (did you mean {meant}=...?)"
    fields = list(getattr(options, "model_fields", {}))
    field = keyword if keyword in fields else next(iter(difflib.get_close_matches(keyword, fields, n=1)), None)
    if options is not None and field is not None:
        return f" ({field} is an option: {func.__name__}({options.__name__}({field}=...)))"
    return ""


def bad_call_message(func: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any],
                     error: TypeError) -> str:
    """The one line for a call `func(*args, **kwargs)` that does not bind to its signature."""
    options = _options_type(func)
    params = inspect.signature(func).parameters
    unknown = [k for k in kwargs if k not in params]
    if unknown:
        return f"{_takes(func, options)}; got unexpected keyword {unknown[0]!r}{_hint(func, options, unknown[0])}"
    return f"{_takes(func, options)}; {str(error).rstrip('.')}"


def checked(func: F) -> F:
    """`func`, refusing arguments its signature does not take with a CallError (module docstring)."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise CallError(bad_call_message(func, args, kwargs, exc)) from None
        return func(*args, **kwargs)

    return typing.cast(F, call)


__all__ = ["SYNONYMS", "bad_call_message", "checked"]
