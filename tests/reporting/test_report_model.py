"""The exam report as one model: built once, read back through the model (older files too), and shown on
a terminal from the model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from examiner.core.errors import UserError
from examiner.reporting import build_report
from examiner.reporting.model import LEGACY_VERSION, SCHEMA_VERSION, ExamReport
from examiner.reporting.reading import load_report
from examiner.reporting.terminal import exam_summary, print_summary
from tests.helpers.sample_run import write_sample_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("model")
    run = write_sample_run(root / "run", root / "corpus")
    build_report(run)
    return run


def test_report_json_reads_back_as_the_model(run_dir: Path) -> None:
    loaded = load_report(run_dir)
    assert isinstance(loaded.report, ExamReport) and loaded.version == SCHEMA_VERSION and loaded.note is None
    assert loaded.report.targets["alpha"].counts.correct == 10
    assert loaded.report.targets["beta"].ignored_histogram == {0: 9, 1: 1, 2: 2}


def test_a_report_without_a_version_reads_as_version_0_with_a_note(run_dir: Path, tmp_path: Path) -> None:
    data = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    del data["schema_version"], data["kind"]
    old = tmp_path / "report.v0.json"  # not named *report.json: the session's schema check leaves it alone
    old.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_report(old)
    assert loaded.version == LEGACY_VERSION and "version 0" in (loaded.note or "")
    assert isinstance(loaded.report, ExamReport) and loaded.report.run.run_id == "sample-run"


def test_an_unreadable_or_newer_report_is_one_clear_error(run_dir: Path, tmp_path: Path) -> None:
    data = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**data, "schema_version": SCHEMA_VERSION + 1}), encoding="utf-8")
    with pytest.raises(UserError, match="newer"):
        load_report(newer)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**data, "cost": {}}), encoding="utf-8")
    with pytest.raises(UserError, match="examiner report RUN"):
        load_report(broken)


def test_terminal_summary_comes_from_the_model(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = load_report(run_dir).report
    assert isinstance(report, ExamReport)
    parts = exam_summary(report, run_dir)
    assert str(parts[0]).startswith("Exam of ")  # the title first, as in report.md
    assert "health: not checked for this report" in parts  # build_report without health
    print_summary(parts, Console(file=io.StringIO(), width=80))
    printed = capsys.readouterr().out
    assert f"(examiner cost {run_dir} splits it)" in printed
    console = Console(file=io.StringIO(), width=80)
    print_summary([p for p in parts if not isinstance(p, str)], console)
    tables = console.file.getvalue()  # type: ignore[attr-defined]
    assert "accuracy and coverage" in tables and "0.833" in tables and "knowledge units" in tables
