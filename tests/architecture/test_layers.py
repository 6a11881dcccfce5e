"""The import rule, held by walking every module's imports.

Layers, top to bottom (docs/ARCHITECTURE.md): command line -> Python API -> methods (exam, judging,
meta) -> reporting -> agents -> services (llm, corpus, stats, prompts) -> simulator -> core. The command
line parses flags into the API's options and prints its results; the API never imports the command
line, and nothing but the command line imports argparse. A module may import
its own layer and the layers below it, never one above. The top-level folders agents/ and prompts/ are
the packages examiner.agents and examiner.prompts (setup.py). Two further rules: only the gateway's provider pool (which starts simulated
endpoints), the command line and the simulator itself import the simulator; and nothing in the gateway
or the simulator loads modules by name (importlib), so behaviour cannot arrive from above unseen.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("cli", ("examiner.cli", "examiner.__main__")),
    ("api", ("examiner.api", "examiner")),
    ("methods", ("examiner.exam", "examiner.judging", "examiner.meta")),
    ("reporting", ("examiner.reporting",)),
    ("agents", ("examiner.agents",)),
    ("services", ("examiner.llm", "examiner.corpus", "examiner.stats", "examiner.prompts")),
    ("simulator", ("examiner.simulator",)),
    ("core", ("examiner.core",)),
]
"""Longest prefix wins. `examiner` alone is the package face: its version string and the Python API
(examiner.api), which it loads on first use; test_the_package_face_loads_nothing_on_import holds it lazy."""

SIMULATOR_USERS = ("examiner.llm.providers", "examiner.cli", "examiner.simulator")
NO_DYNAMIC_IMPORTS = ("examiner.llm", "examiner.simulator")


INSTALLED_INSIDE = ("agents", "prompts")
"""Top-level folders installed inside the examiner namespace (setup.py)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in INSTALLED_INSIDE:
        parts.insert(0, "examiner")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, rank = "", -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, rank = prefix, len(LAYERS) - index
    if rank < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/architecture/test_layers.py")
    return rank


def project_modules() -> list[tuple[str, Path]]:
    found = []
    for base in ("examiner", *INSTALLED_INSIDE):
        for path in sorted((ROOT / base).rglob("*.py")):
            found.append((module_name(path), path))
    return found


def _is_module(name: str) -> bool:
    parts = name.split(".")
    if len(parts) > 1 and parts[0] == "examiner" and parts[1] in INSTALLED_INSIDE:
        parts.pop(0)
    base = ROOT.joinpath(*parts)
    return base.is_dir() or base.with_suffix(".py").is_file()


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every absolute import of a project module, at any depth in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from examiner import stats` imports the subpackage examiner.stats
            modules = [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names
                       if _is_module(f"{node.module}.{alias.name}")]
            # ... and, from the package face, nothing else: every examiner module runs the (lazy) face
            # anyway, so only a name taken from the face itself (__version__) is an import of it
            if node.module != "examiner" or len(modules) < len(node.names):
                found.append((node.lineno, node.module))
            found += modules
    return [(line, name) for line, name in found if name.split(".")[0] == "examiner"]


def test_every_module_has_a_layer() -> None:
    for module, _ in project_modules():
        layer_of(module)


def upward_imports(module: str, path: Path) -> list[str]:
    """The imports in `path` (module `module`) of a layer above the module's own."""
    own = layer_of(module)
    return [f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line} {module} imports {imported}"
            for line, imported in imports_of(path) if layer_of(imported) > own]


def test_no_module_imports_a_layer_above_it() -> None:
    upward = [found for module, path in project_modules() for found in upward_imports(module, path)]
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)


def test_the_api_sits_below_the_command_line(tmp_path: Path) -> None:
    """The API is a layer of its own under the CLI: an API module importing the command line is caught,
    the CLI importing the API is not."""
    assert layer_of("examiner.cli.commands.exam") > layer_of("examiner.api.exam") > layer_of("examiner.exam.runner")
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from examiner.cli.flags import output_dir\n", encoding="utf-8")
    assert upward_imports("examiner.api.sample", sample) == [
        f"{sample}:2 examiner.api.sample imports examiner.cli.flags"]
    sample.write_text("from examiner.api.exam import run_exam\n", encoding="utf-8")
    assert upward_imports("examiner.cli.commands.sample", sample) == []
    assert upward_imports("examiner.exam.sample", sample) == [f"{sample}:1 examiner.exam.sample imports examiner.api.exam"]


def test_only_the_command_line_parses_flags() -> None:
    """No library module imports argparse: flags are the command line's business (the simulator's own
    `python -m examiner.simulator` entry excepted, a separate program)."""
    users = []
    for module, path in project_modules():
        if module.startswith("examiner.cli") or module == "examiner.simulator.__main__":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            users += [f"{path.relative_to(ROOT)}:{node.lineno}" for name in names if name.split(".")[0] == "argparse"]
    assert not users, f"argparse outside the command line: {users}"


def test_only_the_provider_pool_and_the_cli_start_the_simulator() -> None:
    users = []
    for module, path in project_modules():
        if module.startswith(SIMULATOR_USERS):
            continue
        for line, imported in imports_of(path):
            if imported == "examiner.simulator" or imported.startswith("examiner.simulator."):
                users.append(f"{path.relative_to(ROOT)}:{line} {module} imports {imported}")
    assert not users, "reach the simulator through an endpoint, not by import:\n" + "\n".join(users)


@pytest.mark.parametrize("package", NO_DYNAMIC_IMPORTS)
def test_no_dynamic_imports_in_the_gateway_or_simulator(package: str) -> None:
    offenders = []
    for module, path in project_modules():
        if module == package or module.startswith(package + "."):
            text = path.read_text(encoding="utf-8")
            if "import_module" in text or "__import__(" in text:
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"modules loaded by name: {offenders}"


def test_the_package_face_loads_nothing_on_import() -> None:
    """`import examiner` loads no other examiner module: the API arrives on first use, so the face sitting
    at the top layer never drags the layers in below a module that imports from examiner.core."""
    code = "import sys, examiner; print(sorted(m for m in sys.modules if m.startswith('examiner')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.strip() == "['examiner']"


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    """The walker itself works: an import from a role into a method is reported."""
    assert layer_of("examiner.agents.judge.unit_judge") < layer_of("examiner.exam.nodes")
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from examiner.exam import nodes\n", encoding="utf-8")
    assert imports_of(sample) == [(2, "examiner.exam"), (2, "examiner.exam.nodes")]
    sample.write_text("from examiner import stats\nfrom examiner import __version__\n", encoding="utf-8")
    assert imports_of(sample) == [(1, "examiner.stats"), (2, "examiner")]
    sample.write_text("from examiner.agents.judge import unit_judge\n", encoding="utf-8")
    assert imports_of(sample) == [(1, "examiner.agents.judge"), (1, "examiner.agents.judge.unit_judge")]
    assert layer_of("examiner") > layer_of("examiner.core.records")
