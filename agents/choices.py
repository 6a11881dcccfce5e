"""Field types built per call: a value that may only be one of the names a call gave (U1..Uk), and a list
of such values, for the reply schemas that endpoints enforce (OpenAI structured outputs, llama.cpp
grammars), so a reply cannot name a unit from outside its call.

The names are known only at run time, so the types are built at run time (`Literal[...]` over a tuple,
`list[...]` over that); the casts tell mypy what the built objects are, which it cannot infer from a
subscript evaluated at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypeVar, cast

if TYPE_CHECKING:
    from typing_extensions import TypeForm

T = TypeVar("T")


def one_of(names: Sequence[str]) -> TypeForm[str]:
    """`Literal[names...]`: a string that is one of `names`."""
    return cast("TypeForm[str]", Literal.__getitem__(tuple(names)))


def list_of(item: TypeForm[T]) -> TypeForm[list[T]]:
    """`list[item]`."""
    return cast("TypeForm[list[T]]", list.__class_getitem__(item))


__all__ = ["list_of", "one_of"]
