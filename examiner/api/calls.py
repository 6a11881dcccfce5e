"""Calls of the public API with arguments a function does not take: one clear line instead of Python's
bare TypeError.

Why: `run_exam(config={...})` used to end in "run_exam() got an unexpected keyword argument 'config'",
which says neither what the function takes nor where the settings go. Each public function, as
examiner.api hands it out, first binds its arguments to its signature; a mismatch becomes a CallError
(a UserError and a TypeError) naming what it takes and the likely meant name. An argument of the wrong
type (`run_exam("corpus")`, `judge(JudgeOptions(...), settings=5)`) is one too, checked against the
function's annotations before it runs: it used to end in an AttributeError or TypeError from deep inside.
The function itself runs unchanged, so a TypeError raised inside it is never mistaken for a bad call.
"""

from __future__ import annotations

import collections.abc
import difflib
import functools
import inspect
import types
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


def fits(value: Any, hint: Any) -> bool:
    """Whether `value` is of the annotated type `hint`, as far as a plain isinstance check can tell: a
    union is any of its members, a generic its container (`list[str]` a list), a Literal one of its
    values; what cannot be checked this way (Any, a TypeVar, a forward reference) fits."""
    if hint is Any or isinstance(hint, (TypeVar, typing.ForwardRef, str)):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, member) for member in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if origin is collections.abc.Callable or hint is collections.abc.Callable:
        return callable(value)
    if origin is not None:
        return not isinstance(origin, type) or isinstance(value, origin)
    if isinstance(hint, type):
        if hint is float:
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return isinstance(value, hint)
    return True


def _type_name(hint: Any) -> str:
    """An annotation in words: `ExamOptions`, `str | Path | None`, `Sequence` (a generic by its container)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(member) for member in typing.get_args(hint))
    if origin is typing.Literal:
        return " | ".join(repr(value) for value in typing.get_args(hint))
    if hint is None or hint is type(None):
        return "None"
    if origin is collections.abc.Callable:
        return "a function"
    if isinstance(origin, type):
        return origin.__name__
    return hint.__name__ if isinstance(hint, type) else str(hint)


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The function's resolved parameter annotations ({} when one cannot be resolved)."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - an annotation only a type checker sees: nothing checked
        return {}
    hints.pop("return", None)
    return hints


def wrong_type_message(func: Callable[..., Any], bound: inspect.BoundArguments, hints: Mapping[str, Any]) -> str | None:
    """The one line for the first argument whose type is not its annotation's, or None."""
    for name, value in bound.arguments.items():
        if name in hints and not fits(value, hints[name]):
            shown = repr(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            advice = ""
            options = _options_type(func)
            if options is not None and name == next(iter(bound.signature.parameters)) and isinstance(value, Mapping):
                advice = f" (pass {options.__name__}(**mapping))"
            return (f"{_takes(func, options)}; {name} must be {_type_name(hints[name])}, got "
                    f"{type(value).__name__} {shown}{advice}")
    return None


def checked(func: F) -> F:
    """`func`, refusing arguments its signature does not take, or of types its annotations do not name,
    with a CallError (module docstring)."""
    signature = inspect.signature(func)
    hints = _hints(func)

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise CallError(bad_call_message(func, args, kwargs, exc)) from None
        wrong = wrong_type_message(func, bound, hints)
        if wrong is not None:
            raise CallError(wrong)
        return func(*args, **kwargs)

    return typing.cast(F, call)


__all__ = ["SYNONYMS", "bad_call_message", "checked", "fits", "wrong_type_message"]
