"""The repository stands alone: no tracked file points outside it, and every document it links exists.

A user's clone has nothing beside it, so a path into a folder beside the repository (or the parent of the
project root) in code, docs or tests works only on the machine that wrote it. `.ci/run` repeats the first
check before the suite.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

OUTSIDE = re.compile(r"\.\./shared|/work/shared|parents\[1\]\.parent|ROOT\.parent\b|PROJECT_ROOT\.parent")
"""Spellings of a path beside the repository (the old validation-data folder among them)."""

CI_SCRIPT = ROOT / ".ci" / "run"
"""The one file allowed to name the data folder beside the repository: CI points EXAMINER_DATA at it when present."""

MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in names.decode().split("\0") if name]


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def test_no_tracked_file_points_outside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        text = _text(path) if path.is_file() else None
        for line_no, line in enumerate((text or "").splitlines(), start=1):
            if OUTSIDE.search(line) and path.name != Path(__file__).name and path != CI_SCRIPT:
                offenders.append(f"{path.relative_to(ROOT)}:{line_no}: {line.strip()[:100]}")
    assert offenders == [], "paths outside the repository:\n" + "\n".join(offenders)


def test_every_relative_markdown_link_resolves_inside_the_repository() -> None:
    broken = []
    for path in _tracked_files():
        if path.suffix != ".md" or not path.is_file():
            continue
        for target in MARKDOWN_LINK.findall(path.read_text(encoding="utf-8", errors="replace")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor on the same page
            resolved = (path.parent / target.split("#", 1)[0]).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                broken.append(f"{path.relative_to(ROOT)} -> {target}")
    assert broken == [], "links that do not resolve inside the repository:\n" + "\n".join(broken)


def test_public_sets_resolve_to_the_user_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The package ships no dataset: with EXAMINER_DATA unset the data root is the user cache folder, and a
    set that is not there is one line naming the command that fetches it."""
    import platformdirs

    from examiner.core.errors import UserError
    from examiner.corpus import benchmarks, datasets

    monkeypatch.delenv("EXAMINER_DATA", raising=False)
    assert not (ROOT / "examiner" / "data").exists()
    assert benchmarks.data_root() == platformdirs.user_cache_path("examiner") / "data"
    monkeypatch.setattr(platformdirs, "user_cache_path", lambda name: tmp_path / "cache" / name)  # an empty cache
    root = benchmarks.data_root()
    assert root == tmp_path / "cache" / "examiner" / "data"
    for spec, name in (("llmbar:Natural", "llmbar"), ("summeval", "summeval")):
        with pytest.raises(UserError) as caught:
            datasets.read_records(spec)
        assert str(caught.value) == f'{name} is not in {root}: run "examiner data pull {name}" (or set EXAMINER_DATA)'
    assert not root.exists()  # reading creates nothing
