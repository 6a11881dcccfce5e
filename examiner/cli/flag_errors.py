"""A command's options built from its flags, where a value the options refuse is the user's error.

Why: the API's option models (pydantic) check ranges (`max_steps >= 1`, `learning_rate > 0`); built
from flags, a refused value raised ValidationError, which the CLI's last-resort handler took for a bug
(exit 70, "internal error"). Here it is one line naming the flag and the value, exit 2.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from examiner.core.errors import UserError

M = TypeVar("M", bound=BaseModel)


def flag_name(field: str, flags: dict[str, str] | None = None) -> str:
    """The flag that sets option `field`: `flags`' spelling if given, else `--field-name`."""
    return (flags or {}).get(field) or "--" + field.replace("_", "-")


def options_from_flags(model: type[M], flags: dict[str, str] | None = None, **values: Any) -> M:
    """`model(**values)`; a value it refuses is a UserError naming the flag (`flags` maps an option to
    its flag where the names differ) and the value given."""
    try:
        return model(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = str(error["loc"][0]) if error.get("loc") else ""
            given = values.get(field, error.get("input"))
            message = str(error.get("msg", "not accepted")).removeprefix("Value error, ")
            problems.append(f"{flag_name(field, flags)} {given}: {message[:1].lower()}{message[1:]}" if field
                            else message)
        raise UserError("; ".join(problems)) from None


__all__ = ["flag_name", "options_from_flags"]
