"""Every stage a call can be recorded under is in the one registry (examiner.core.stages.Stage).

The sources are walked, not imported: a `stage=` argument or default, a `ledger_stage(...)` block, a
simulator behaviour registered for a stage, a `*_STAGE` constant or a mode's `judge_stage`, each spelled
as a literal, must name a registered stage; an f-string stage (the evaluator's `assess_{kind}`) must be
registered for every kind it can take.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from examiner.core.stages import QUESTION_WRITING, STAGES, Stage, is_stage

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [*sorted((ROOT / "examiner").rglob("*.py")), *sorted((ROOT / "agents").rglob("*.py"))]
CALLS_WITH_A_STAGE_ARGUMENT = {"ledger_stage": 0, "register_behaviour": 1}


def _literals(node: ast.AST | None) -> Iterator[str]:
    """The string literals an expression can evaluate to (both arms of a conditional)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _literals(node.body)
        yield from _literals(node.orelse)


def _stage_literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "stage":
            yield from ((node.value.lineno, s) for s in _literals(node.value))
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            index = CALLS_WITH_A_STAGE_ARGUMENT.get(name)
            if index is not None and len(node.args) > index:
                yield from ((node.lineno, s) for s in _literals(node.args[index]))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [getattr(t, "id", getattr(t, "attr", "")) for t in targets]
            if any(n.endswith("_STAGE") or n in ("judge_stage", "stage") for n in names):
                yield from ((node.lineno, s) for s in _literals(node.value))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
                     *zip(args.kwonlyargs, args.kw_defaults)]
            yield from ((node.lineno, s) for arg, default in pairs if arg.arg == "stage" for s in _literals(default))


def test_every_stage_literal_in_the_sources_is_registered() -> None:
    unknown = [f"{path.relative_to(ROOT)}:{line}: {stage!r}"
               for path in SOURCES for line, stage in _stage_literals(ast.parse(path.read_text(encoding="utf-8")))
               if stage and not is_stage(stage)]  # "" is a call without a stage
    assert not unknown, "stages missing from examiner/core/stages.py: " + "; ".join(unknown)


def test_the_walk_finds_the_stages_it_guards() -> None:
    """The guard is not vacuous: the calls of the exam and of the judges are found in the sources."""
    found = {stage for path in SOURCES for _, stage in _stage_literals(ast.parse(path.read_text(encoding="utf-8")))}
    assert {"question", "probe", "answer", "probe_answer", "judge", "judge_noref", "grade", "explain",
            "extract_units", "debate", "bsm_solve"} <= found
    assert list(_stage_literals(ast.parse('f(stage="nonsense" if x else "judge")'))) == [(1, "nonsense"), (1, "judge")]


def test_every_evaluator_item_kind_has_its_assess_stage() -> None:
    from examiner.agents.evaluators.evaluator import SCHEMAS

    assert {f"assess_{kind}" for kind in SCHEMAS} <= set(STAGES)


def test_a_stage_is_the_string_the_ledger_holds() -> None:
    import json

    for stage in Stage:
        assert stage == stage.value and f"{stage}" == str(stage) == stage.value and hash(stage) == hash(stage.value)
        assert json.loads(json.dumps({"stage": stage})) == {"stage": stage.value}
    assert len(set(STAGES)) == len(STAGES)


def test_question_writing_stages_are_the_examiners() -> None:
    assert set(QUESTION_WRITING) == {"question", "probe", "extract_units"}
