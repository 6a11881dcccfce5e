"""Which public sets a test reads: the invented stand-ins in tests/fixtures/data, or the real sets.

A test of a feature (a loader, a reader, the command line, judging a few pairs) reads the fixtures, which
hold the real files' formats and layout with invented content, so it runs in a clone with nothing beside
it: take the `fixture_data` fixture (tests/conftest.py). A test that reproduces a figure measured on a real
set (its counts, a published correlation) is marked `@requires_real_data("summeval")`: it runs where the
data folder ($EXAMINER_DATA, else the user's cache folder) holds that set as `examiner data pull` writes it,
and otherwise is skipped with a reason that says how to enable it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examiner.corpus.public_sets import DATA_ENV, configured_root, find_set

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
"""The invented sets (tests/fixtures/make_data.py writes them; tests/fixtures/data/README.md says what
each holds)."""


def missing_real_files(names: tuple[str, ...], root: Path) -> list[str]:
    """The files of the sets `names` that `root` lacks or holds at another size than the pinned one (so a
    folder of fixtures, or a half-finished copy, never passes for the real set)."""
    return [f.local for name in names for f in find_set(name).files
            if not (root / f.local).is_file() or (root / f.local).stat().st_size != f.size]


def real_data_reason(names: tuple[str, ...]) -> str:
    """Why a reproduction is skipped, and the command that enables it."""
    sets = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return (f'needs the real {sets} set{"s" if len(names) > 1 else ""}: run "examiner data pull {" ".join(names)}" '
            f"or set {DATA_ENV}")


def requires_real_data(*names: str) -> pytest.MarkDecorator:
    """Mark a test that reproduces a figure of the real sets `names` (`llmbar`, `summeval`...): skipped
    unless the data folder holds every file of each, at its pinned size."""
    if not names:
        raise ValueError("name at least one set")
    for name in names:
        find_set(name)  # a typo is an error at collection, not a test that is always skipped
    missing = missing_real_files(names, configured_root())
    return pytest.mark.skipif(bool(missing), reason=real_data_reason(names))
