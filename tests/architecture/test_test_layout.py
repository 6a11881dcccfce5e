"""No test module imports another test module (`test_*.py` or `conftest.py`).

Why: a test module that imports another one runs the other's module-level code, imports its fixtures into
a second namespace (a module-scoped fixture then runs twice) and ties the two files together, so neither
can move or change alone. Shared helpers live in tests/helpers/ (`from tests.helpers.x import y`) and
shared fixtures in tests/conftest.py, which pytest finds without an import.

The check reads every tests/**/*.py as a syntax tree, resolves each import the way Python could find it
from the repository root, the tests folder or the importing file's own folder, and fails on any import
that lands on a test module or a conftest.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest


def repository_root(start: Path) -> Path:
    """The nearest folder above `start` holding pyproject.toml, so the check works from any tests subfolder."""
    for folder in start.resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    raise FileNotFoundError(f"no pyproject.toml above {start}")


ROOT = repository_root(Path(__file__))
TESTS = ROOT / "tests"


def is_test_module(path: Path) -> bool:
    """A file pytest collects tests or fixtures from: test_*.py or conftest.py."""
    return path.suffix == ".py" and (path.name.startswith("test_") or path.name == "conftest.py")


def imported_names(tree: ast.AST, package: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every module an import could load: `import a.b` gives a.b; `from a import b`
    gives a and a.b (b may be a module); relative imports are resolved against `package`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base = ".".join(parts[:len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base:
                yield node.lineno, base
            for alias in node.names:
                if alias.name != "*":
                    yield node.lineno, f"{base}.{alias.name}" if base else alias.name


def module_file(name: str, search: list[Path]) -> Path | None:
    """The file `name` would be imported from, looking in each folder of `search` in turn, or None."""
    relative = Path(*name.split("."))
    for folder in search:
        for candidate in (folder / relative.with_suffix(".py"), folder / relative / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def imports_of_test_modules(path: Path, root: Path = ROOT, source: str | None = None) -> list[str]:
    """'file:line imports name (target)' for every import in `path` (or in `source`, read as if it were
    `path`) that loads a test module or a conftest of the repository at `root`."""
    text = path.read_text(encoding="utf-8") if source is None else source
    package = ".".join(path.parent.relative_to(root).parts)
    search = [root, root / "tests", path.parent]
    found = []
    for line, name in imported_names(ast.parse(text, filename=str(path)), package):
        target = module_file(name, search)
        if target is not None and is_test_module(target):
            found.append(f"{path.relative_to(root)}:{line} imports {name} ({target.relative_to(root)})")
    return found


def test_no_test_module_imports_another_test_module() -> None:
    problems = [problem for path in sorted(TESTS.rglob("*.py")) for problem in imports_of_test_modules(path)]
    assert not problems, ("test modules import other test modules; move what they share to tests/helpers/ "
                          "(or tests/conftest.py for fixtures):\n" + "\n".join(problems))


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """A repository in miniature: a test module and a conftest at the top of tests/, one in a subfolder,
    and a helpers package; the check must tell them apart however an import names them."""
    for name in ("pyproject.toml", "tests/conftest.py", "tests/test_exam.py", "tests/llm/test_gateway.py",
                 "tests/helpers/__init__.py", "tests/helpers/simulated_exam.py", "tests/test_anything.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("source", [
    "from test_exam import sim_settings",
    "import test_exam",
    "from conftest import small_corpus",
    "from tests import test_exam",
    "from tests.test_exam import sim_settings",
    "import tests.conftest",
    "from tests.llm.test_gateway import Gateway",
    "from . import test_exam",
    "from .test_exam import sim_settings",
    "from .llm import test_gateway",
    "def later():\n    from test_exam import sim_settings",
])
def test_the_check_finds_each_way_of_importing_a_test_module(layout: Path, source: str) -> None:
    assert imports_of_test_modules(layout / "tests" / "test_anything.py", layout, source)


def test_the_check_finds_a_sibling_imported_from_a_subfolder(layout: Path) -> None:
    """Under pytest's old import mode a subfolder's own directory is on sys.path, so `import test_gateway`
    from tests/llm/ loads tests/llm/test_gateway.py."""
    path = layout / "tests" / "llm" / "test_other.py"
    assert imports_of_test_modules(path, layout, "from test_gateway import Gateway")


@pytest.mark.parametrize("source", [
    "from tests.helpers.simulated_exam import sim_settings",
    "from tests.helpers import simulated_exam",
    "from aiohttp.test_utils import TestClient",
    "from examiner.exam.runner import start_exam",
    "import pytest",
])
def test_the_check_lets_helpers_and_libraries_through(layout: Path, source: str) -> None:
    assert imports_of_test_modules(layout / "tests" / "test_anything.py", layout, source) == []


TEST_FOLDERS = {"architecture"}
"""Test folders that mirror no package: checks of the repository as a whole (layers, standing alone, this)."""


def package_folders() -> set[str]:
    """The folders tests may live in: one per package of examiner (core, llm, ..., cli, api) and agents."""
    packages = {p.parent.name for p in (ROOT / "examiner").glob("*/__init__.py")}
    return packages | {"agents"} | TEST_FOLDERS


def test_tests_mirror_the_packages() -> None:
    """Every test module sits in tests/<package>/ for the package it tests, never loose in tests/ or in a
    folder that names no package (sample data and helpers live in tests/fixtures and tests/helpers)."""
    allowed = package_folders()
    misplaced = [path.relative_to(ROOT).as_posix() for path in TESTS.rglob("test_*.py")
                 if path.parent == TESTS or path.relative_to(TESTS).parts[0] not in allowed]
    assert not misplaced, f"test modules outside tests/<package>/: {misplaced}"
