"""Every public function called with an argument of the wrong type raises examiner's CallError (a
UserError and a TypeError) with one line naming the parameter, the type it takes and what it got, before
any work: never a raw AttributeError or TypeError from deep inside."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import examiner.api as api
from examiner.api.calls import fits
from examiner.core.errors import CallError

OPTIONS_FUNCTIONS = sorted(name for name in api.__all__ if inspect.isfunction(getattr(api, name))
                           and next(iter(inspect.signature(getattr(api, name)).parameters), None) == "options")


@pytest.mark.parametrize("name", OPTIONS_FUNCTIONS)
@pytest.mark.parametrize("wrong", ["corpora/harbor-water", 5, {"corpus": "x"}, None])
def test_options_of_the_wrong_type_are_one_call_error(name: str, wrong: Any) -> None:
    with pytest.raises(CallError) as raised:
        getattr(api, name)(wrong)
    line = str(raised.value)
    assert "\n" not in line and f"{name}() takes" in line and "options must be" in line, line
    assert isinstance(raised.value, TypeError)


@pytest.mark.parametrize(("name", "args", "kwargs", "words"), [
    ("read_exam", (5,), {}, "run_dir must be str | Path, got int 5"),
    ("data_path", (5,), {}, "name must be str"),
    ("data_status", (), {"sets": 5}, "sets must be Sequence | None"),
    ("resolve_settings", (5, None), {}, "source must be Settings | Mapping | str | Path | None"),
])
def test_other_parameters_of_the_wrong_type_are_one_call_error(name: str, args: tuple[Any, ...],
                                                                kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(CallError, match=words.replace("|", r"\|")):
        getattr(api, name)(*args, **kwargs)


def test_settings_and_notes_of_the_wrong_type_are_refused_before_the_run() -> None:
    options = api.ExamOptions(corpus="no-such-corpus", simulate=True)
    with pytest.raises(CallError, match="settings must be"):
        api.run_exam(options, settings=5)
    judged = api.JudgeOptions(data="no-such.jsonl", method="pairwise", out="o")
    with pytest.raises(CallError, match="notes must be a function"):
        api.judge(judged, notes=5)


def test_fits_reads_unions_generics_and_literals() -> None:
    from pathlib import Path
    from typing import Literal, Sequence

    assert fits(Path("x"), str | Path) and not fits(5, str | Path)
    assert fits([1], Sequence[int]) and not fits(5, Sequence[int] | None) and fits(None, Sequence[int] | None)
    assert fits("a", Literal["a", "b"]) and not fits("c", Literal["a", "b"])
    assert fits(1, float) and not fits(True, float)
