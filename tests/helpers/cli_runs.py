"""`examiner` commands run in-process, and what a user must see when one fails: the exit code and exactly
one `examiner: error: ...` line, no traceback. Also `as_killed`, which makes a finished run look killed
so a test can resume it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.exam.run_writer import RunStore


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
            ) -> tuple[int, list[str], str]:
    """(exit code, stderr lines (log warnings included), stdout) of `examiner ARGS`."""
    caplog.clear()
    capsys.readouterr()
    with caplog.at_level(logging.WARNING):
        code = main(args)
    out, err = capsys.readouterr()
    logged = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.WARNING]
    return code, err.splitlines() + logged, out


def assert_one_error(code: int, lines: list[str], *words: str) -> None:
    """The command exited 2 with exactly one `examiner: error:` line, no traceback, naming every one of `words`."""
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("examiner: error: ") and "Traceback" not in lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


def as_killed(run_dir: Path) -> None:
    """What a kill leaves in run.json: the status of a run still going."""
    store = RunStore(run_dir)
    info = store.read_info()
    info.status, info.stop_reason = "running", ""
    store.write_info(info)
