"""The names users pick from are declared once (examiner.core.names) and every registry, choice list and
typed field agrees with them."""

from __future__ import annotations

import typing

import pytest

from examiner.api.exam import CorpusOptions
from examiner.api.judging import JudgeOptions
from examiner.cli.main import build_parser
from examiner.core.names import EXAM_JUDGE_METHODS, EXAM_MODES, JUDGE_METHODS
from examiner.core.records import RunInfo
from examiner.exam.modes import MODES
from examiner.judging.exam_judges import JUDGE_METHODS as EXAM_JUDGE_REGISTRY


def test_the_registries_hold_exactly_the_declared_names() -> None:
    assert tuple(MODES) == EXAM_MODES
    assert EXAM_JUDGE_REGISTRY == EXAM_JUDGE_METHODS


def _choices(command: str, flag: str) -> tuple[str, ...]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # type: ignore[union-attr]
    action = next(a for a in sub._actions if flag in a.option_strings)
    return tuple(action.choices)


@pytest.mark.parametrize(("command", "flag", "names"), [
    ("run", "--mode", EXAM_MODES), ("estimate", "--mode", EXAM_MODES),
    ("run", "--judge-mode", EXAM_JUDGE_METHODS), ("judge", "--method", JUDGE_METHODS),
])
def test_the_command_line_offers_the_declared_names(command: str, flag: str, names: tuple[str, ...]) -> None:
    assert _choices(command, flag) == names


def test_typed_fields_take_exactly_the_declared_names() -> None:
    def values(model: type, field: str) -> tuple[str, ...]:
        return typing.get_args(model.model_fields[field].annotation)

    assert values(CorpusOptions, "mode") == EXAM_MODES and values(RunInfo, "mode") == EXAM_MODES
    assert values(CorpusOptions, "judge_mode") == EXAM_JUDGE_METHODS and values(RunInfo, "judge_mode") == EXAM_JUDGE_METHODS
    assert values(JudgeOptions, "method") == JUDGE_METHODS
