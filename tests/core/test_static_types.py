"""mypy --strict passes on the strictly typed layers (every `[[tool.mypy.overrides]]` block of
pyproject.toml with `strict = true`: examiner.core and examiner.agents, and any layer added there).

Run through tests/helpers/typecheck.py, which checks agents/ under its installed name examiner.agents.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.typecheck import ROOT, strict_paths


def test_strict_paths_are_the_strict_override_blocks(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.mypy]\nstrict = false\n\n'
                         '[[tool.mypy.overrides]]\nmodule = ["examiner.core.*", "examiner.agents.*"]\nstrict = true\n\n'
                         '[[tool.mypy.overrides]]\nmodule = "examiner.llm.*"\nstrict = true\n\n'
                         '[[tool.mypy.overrides]]\nmodule = ["examiner.exam.*"]\nignore_errors = true\n', encoding="utf-8")
    assert strict_paths(pyproject) == ["examiner/core", "agents", "examiner/llm"]
    assert {"examiner/core", "agents"} <= set(strict_paths())


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_strict_layers_type_check() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "helpers" / "typecheck.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("Success: no issues found in ")
