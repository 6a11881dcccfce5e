"""The command line a new user meets: every command's --help says what it does with an example, building
the parser loads no heavy library (so `examiner --help` is quick), and the claims README and docs/ make about
the flags match the parsers."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from examiner.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("langgraph", "numpy", "faiss", "torch", "sentence_transformers", "openai", "rich", "scipy", "sklearn",
         "pydantic", "yaml", "examiner.exam.runner", "examiner.llm.gateway", "examiner.core.config")


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_command_help_says_what_it_does_with_an_example(name: str) -> None:
    parser = subcommands()[name]
    text = parser.format_help()
    assert parser.description and len(parser.description.split()) >= 8, f"{name}: no description"
    assert "Example" in text, f"`examiner {name} --help` has no example"
    examples = text.split("Example", 1)[1]
    assert f"examiner {name}" in examples, f"{name}: the example does not run `examiner {name}`"


def test_building_the_parser_loads_no_heavy_module() -> None:
    """`examiner --help` builds every sub-command's parser; none of them may import a heavy library."""
    code = ("import json, sys; import examiner, examiner.cli.main; examiner.cli.main.build_parser(); "
            "print(json.dumps(sorted(sys.modules)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       cwd=ROOT).stdout)
    heavy = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert not heavy, f"building the parser imports {sorted({m.split('.')[0] for m in heavy})}: {heavy[:10]}"


def test_the_hard_coded_defaults_match_the_estimate() -> None:
    """The estimate's pilot defaults are spelled out for the --help text (the estimate loads the exam); they
    must agree. (--mode and --judge-mode choices come from examiner.core.names: tests/core/test_names.py.)"""
    from examiner.cli.commands import exam as command
    from examiner.exam import estimate

    assert (command.PILOT_CLUSTERS, command.MIN_PILOT_UNITS) == (estimate.PILOT_CLUSTERS, estimate.MIN_PILOT_UNITS)
    from examiner.cli.commands.setup import ROLE_NAMES
    from examiner.core.config import ROLES

    assert ROLE_NAMES == tuple(ROLES)


def _user_docs() -> list[Path]:
    """The pages a user reads: README (the front page) and the manual in docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _readme_common_flags() -> tuple[list[str], list[str]]:
    """docs/COMMANDS.md's sentence 'The commands that call models (`run`, ...) take `--config FILE`, ...'."""
    text = (ROOT / "docs" / "COMMANDS.md").read_text(encoding="utf-8")
    match = re.search(r"The commands that call models\s+\(([^)]*)\)\s+take\s+(.*?)\.", text, re.S)
    assert match, "docs/COMMANDS.md no longer states which commands take the common flags"
    commands = re.findall(r"`(\w[\w-]*)`", match.group(1))
    flags = re.findall(r"`(--[\w-]+)", match.group(2))
    return commands, flags


def test_readme_common_flag_claim_holds_for_each_command() -> None:
    commands, flags = _readme_common_flags()
    parsers = subcommands()
    assert len(commands) >= 5 and len(flags) >= 4
    for name in commands:
        options = {o for action in parsers[name]._actions for o in action.option_strings}
        missing = [flag for flag in flags if flag not in options]
        assert not missing, f"docs/COMMANDS.md says `examiner {name}` takes {missing}, its parser does not"


def test_every_flag_the_docs_show_for_a_command_exists() -> None:
    """Each `examiner CMD ... --flag` in README's and the manual's code and tables names a flag CMD's parser has."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in _user_docs())
    parsers = subcommands()
    wrong = []
    for line in text.splitlines():
        for match in re.finditer(r"examiner ([a-z][\w-]*)([^`|#\n]*)", line):
            name, rest = match.group(1), match.group(2)
            if name not in parsers:
                continue
            options = {o for action in parsers[name]._actions for o in action.option_strings}
            wrong += [f"{name} {flag}" for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest) if flag not in options]
    assert not wrong, f"README or docs/ show flags the commands do not take: {wrong}"
