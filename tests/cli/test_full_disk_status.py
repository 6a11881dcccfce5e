"""A full disk leaves run.json with the run's last status: `failed`, never `running` (the atomic rewrite
needs free space, so run.json is written over in place), and a resume on a disk still full is the same
one line, exit 2, no traceback. The disk is made full in-process from the first units.jsonl write on: every
append and every new file (run.json's temporary) fails with ENOSPC, as they do on a real full disk."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from examiner.core import rundir
from examiner.core.full_disk import overwrite_in_place
from examiner.core.rundir import RunDir
from tests.helpers.cli_runs import assert_one_error, run_cli


def _fill_the_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    full: list[bool] = []
    append, atomic = rundir.append_jsonl, rundir._write_atomic

    def append_unless_full(path, rows):  # type: ignore[no-untyped-def]
        if full or Path(path).name == rundir.UNITS:
            full.append(True)
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return append(path, rows)

    def atomic_unless_full(path: Path, text: str) -> None:
        if full:
            raise OSError(errno.ENOSPC, "No space left on device", str(path.with_name(path.name + ".tmp")))
        atomic(path, text)

    monkeypatch.setattr(rundir, "append_jsonl", append_unless_full)
    monkeypatch.setattr(rundir, "_write_atomic", atomic_unless_full)


def test_a_run_the_full_disk_stopped_says_failed_and_its_resume_on_a_full_disk_is_one_line(
        corpus: Path, config_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, caplog) -> None:
    _fill_the_disk(monkeypatch)
    out = tmp_path / "run"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert_one_error(code, lines, "disk full")
    info = RunDir(out).read_info()
    assert info.status == "failed" and info.stop_reason

    code, lines, _ = run_cli(["resume", str(out), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, "disk full", f"examiner resume {out}")
    assert RunDir(out).read_info().status == "failed"


def test_overwrite_in_place_keeps_the_size_and_leaves_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"status": "running", "stop_reason": ""}, indent=1), encoding="utf-8")
    size = path.stat().st_size
    assert overwrite_in_place(path, json.dumps({"status": "failed"}).encode())
    assert path.stat().st_size == size and json.loads(path.read_text()) == {"status": "failed"}
    assert not overwrite_in_place(path, b"x" * (size + 1))  # longer than the file: would need a new block
    assert json.loads(path.read_text()) == {"status": "failed"}
