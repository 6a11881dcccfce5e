"""mypy over the strictly typed layers, with `agents/` checked under its installed name.

Why a runner: setup.py installs the top-level `agents/` folder as `examiner.agents` (an editable install
maps it with an import hook), which mypy cannot follow in the source tree: `mypy -p examiner.agents`
finds nothing, and `mypy agents` would name its modules `agents.*`, so their imports of each other
(`examiner.agents.*`) would not resolve. This runner lets mypy find the files and then gives each module
under agents/ its installed name. Which packages it checks comes from pyproject.toml: every
`[[tool.mypy.overrides]]` block with `strict = true`.

    .venv/bin/python tests/helpers/typecheck.py            # the strict packages
    .venv/bin/python tests/helpers/typecheck.py agents     # some paths only

Prints mypy's messages and its summary line; exits 1 when there are errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: mypy brings tomli
    import tomli as tomllib

from mypy import build
from mypy.errors import CompileError
from mypy.fscache import FileSystemCache
from mypy.main import process_options

ROOT = Path(__file__).resolve().parents[2]
INSTALLED_AS = {"agents": "examiner.agents"}
"""Top-level source folders and the package name setup.py installs each as."""


def strict_paths(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The source folders of the packages pyproject.toml checks strictly (`examiner.core.*` ->
    examiner/core, `examiner.agents.*` -> agents)."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    folders = {name: folder for folder, name in INSTALLED_AS.items()}
    paths: list[str] = []
    for block in config["tool"]["mypy"].get("overrides", []):
        if not block.get("strict"):
            continue
        modules = block["module"] if isinstance(block["module"], list) else [block["module"]]
        for module in modules:
            package = module.removesuffix(".*")
            path = folders.get(package, package.replace(".", "/"))
            if path not in paths:
                paths.append(path)
    return paths


def run(paths: list[str]) -> tuple[list[str], int]:
    """mypy's messages over `paths` (relative to the repository root) and the number of source files."""
    cache = FileSystemCache()
    sources, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), *paths], fscache=cache)
    for source in sources:
        top = source.module.split(".")[0]
        if top in INSTALLED_AS:
            source.module = INSTALLED_AS[top] + source.module[len(top):]
    try:
        messages = build.build(sources, options, fscache=cache).errors
    except CompileError as exc:
        messages = exc.messages
    return messages, len(sources)


def summary(messages: list[str], n_sources: int) -> str:
    """mypy's own last line: success, or how many errors in how many files."""
    errors = [m for m in messages if ": error:" in m]
    if not errors:
        return f"Success: no issues found in {n_sources} source files"
    files = {m.split(":", 1)[0] for m in errors}
    return f"Found {len(errors)} errors in {len(files)} files (checked {n_sources} source files)"


def main(argv: list[str]) -> int:
    os.chdir(ROOT)
    messages, n_sources = run(argv or strict_paths())
    for line in messages:
        print(line)
    print(summary(messages, n_sources))
    return 1 if any(": error:" in m for m in messages) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
