"""The package's face: `dir(examiner)` lists the public API only, and a public function called with a
keyword it does not take says in one line what it takes and what was probably meant (a CallError, which
is a TypeError too), while a TypeError raised inside a function is left alone."""

from __future__ import annotations

import pytest

import examiner
from examiner import api
from examiner.core.errors import CallError, UserError


def test_dir_lists_the_public_api_only() -> None:
    names = dir(examiner)
    assert sorted(examiner.__all__) == sorted(api.__all__), "examiner.__all__ must repeat examiner.api.__all__"
    assert names == sorted([*api.__all__, "__version__"])
    assert not {"Any", "annotations", "api"} & set(names)


@pytest.mark.parametrize(("call", "line"), [
    (lambda: examiner.run_exam(config={"roles": {}}),
     "run_exam() takes ExamOptions (and settings=); got unexpected keyword 'config' (did you mean settings=...?)"),
    (lambda: examiner.run_exam(corpus="corpora/x"),
     "run_exam() takes ExamOptions (and settings=); got unexpected keyword 'corpus' "
     "(corpus is an option: run_exam(ExamOptions(corpus=...)))"),
    (lambda: examiner.compare_runs(run_dir="runs/a"),
     "compare_runs() takes CompareOptions; got unexpected keyword 'run_dir' "
     "(run_dirs is an option: compare_runs(CompareOptions(run_dirs=...)))"),
    (lambda: api.gate(opts=None), "gate() takes GateOptions; got unexpected keyword 'opts' (did you mean options=...?)"),
    (lambda: examiner.read_exam(), "read_exam() takes run_dir; missing a required argument: 'run_dir'"),
])
def test_a_bad_call_is_one_clear_line(call, line: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CallError) as caught:
        call()
    assert str(caught.value) == line
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, UserError)


def test_the_checked_function_is_the_same_function() -> None:
    import inspect

    from examiner.api.exam import run_exam

    assert examiner.run_exam is api.run_exam and inspect.signature(api.run_exam) == inspect.signature(run_exam)
    with pytest.raises(UserError, match="no exam run"):  # a good call runs the function itself
        api.read_exam("no/such/run")
