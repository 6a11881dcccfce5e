"""Writes never follow a symbolic link inside a run folder: `report`, `resume`, `view` (and every writer
that holds the run's lock) refuse a run folder holding one, in one line (exit 2), and the file the link
names is left as it was (or not created)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from examiner.core import rundir
from examiner.core.errors import UserError
from examiner.core.runlock import hold_run_dir
from examiner.reporting.view_server import serve
from tests.helpers.cli_runs import as_killed, assert_one_error, run_cli


@pytest.fixture()
def run(finished_run: Path, tmp_path: Path) -> Path:  # noqa: F811
    copy = tmp_path / "run"
    shutil.copytree(finished_run, copy)
    return copy


@pytest.fixture()
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere.txt"
    path.write_text("not examiner's\n", encoding="utf-8")
    return path


def _link(run: Path, name: str, target: Path) -> None:
    (run / name).unlink(missing_ok=True)
    (run / name).symlink_to(target)


def test_report_refuses_a_report_md_link(run: Path, victim: Path, capsys, caplog) -> None:
    _link(run, rundir.REPORT_MD, victim)
    code, lines, _ = run_cli(["report", str(run)], capsys, caplog)
    assert_one_error(code, lines, str(run / rundir.REPORT_MD), "symbolic link")
    assert victim.read_text(encoding="utf-8") == "not examiner's\n"


def test_report_refuses_a_linked_figure(run: Path, victim: Path, capsys, caplog) -> None:
    (run / rundir.FIGURES).mkdir(exist_ok=True)
    figure = run / rundir.FIGURES / "coverage.png"
    figure.unlink(missing_ok=True)
    figure.symlink_to(victim)
    code, lines, _ = run_cli(["report", str(run)], capsys, caplog)
    assert_one_error(code, lines, str(figure), "symbolic link")
    assert victim.read_text(encoding="utf-8") == "not examiner's\n"


def test_resume_refuses_a_ledger_link(run: Path, victim: Path, capsys, caplog) -> None:
    shutil.copy(run / rundir.LEDGER, victim)
    before = victim.read_bytes()
    _link(run, rundir.LEDGER, victim)
    as_killed(run)
    code, lines, _ = run_cli(["resume", str(run), "--quiet"], capsys, caplog)
    assert_one_error(code, lines, str(run / rundir.LEDGER), "symbolic link")
    assert victim.read_bytes() == before


def test_view_refuses_a_dangling_overrides_link(run: Path, tmp_path: Path) -> None:
    target = tmp_path / "created-by-the-link"
    _link(run, rundir.OVERRIDES, target)
    import asyncio

    with pytest.raises(UserError, match="symbolic link"):
        asyncio.run(serve(run, port=0, who="ana", ready=lambda url: None))
    with pytest.raises(UserError, match="symbolic link"):  # what an override's POST takes first
        with hold_run_dir(run):
            pass
    assert not target.exists()


def test_the_lock_file_is_never_opened_through_a_link(run: Path, victim: Path) -> None:
    _link(run, rundir.LOCK, victim)
    with pytest.raises(UserError, match="symbolic link"):
        with hold_run_dir(run):
            pass
    assert victim.read_text(encoding="utf-8") == "not examiner's\n"
