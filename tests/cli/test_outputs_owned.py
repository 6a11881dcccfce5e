"""No command deletes or overwrites a file it did not write (examiner/core/owned.py): `run --out` clears a
folder only when examiner created it (its marker), however the user's names look like an exam's; single-file
outputs (compare --out, review --sheet, export --to inspect|otel, judge-stats --out) replace only a file
examiner wrote there, unchanged since."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from examiner.core.owned import FOLDER_MARK, WRITTEN, is_marked
from examiner.core.rundir import LOCK, remove_exam_outputs
from tests.helpers.cli_runs import assert_one_error, run_cli


def _users_folder(folder: Path) -> dict[str, str]:
    """A folder of the user's holding only names an exam also writes; its files and contents."""
    (folder / "figures").mkdir(parents=True)
    files = {"config.yaml": "my: settings\n", "report.md": "# my notes\n", "figures/plot.txt": "my plot\n"}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return files


def _unchanged(folder: Path, files: dict[str, str]) -> bool:
    return all((folder / name).read_text(encoding="utf-8") == text for name, text in files.items())


@pytest.mark.parametrize("how", ["plain", "through a link", "config inside"])
def test_run_refuses_a_users_folder_that_holds_only_exam_names(how: str, corpus: Path, config_file: Path,  # noqa: F811
                                                              tmp_path: Path, capsys, caplog) -> None:
    mine = tmp_path / "mine"
    files = _users_folder(mine)
    out, config = mine, config_file
    if how == "through a link":
        out = tmp_path / "link"
        out.symlink_to(mine, target_is_directory=True)
    if how == "config inside":
        shutil.copy(config_file, mine / "config.yaml")
        files["config.yaml"] = (mine / "config.yaml").read_text(encoding="utf-8")
        config = mine / "config.yaml"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert_one_error(code, lines, "not empty")
    assert _unchanged(mine, files)
    assert not (mine / FOLDER_MARK).exists()


def test_a_run_folder_examiner_made_is_marked_and_clearing_it_keeps_the_marker(finished_run: Path,  # noqa: F811
                                                                                tmp_path: Path) -> None:
    assert is_marked(finished_run)
    copy = tmp_path / "run"
    shutil.copytree(finished_run, copy)
    remove_exam_outputs(copy)
    assert sorted(p.name for p in copy.iterdir()) in ([FOLDER_MARK], sorted([FOLDER_MARK, LOCK]))
    (copy / FOLDER_MARK).unlink()
    (copy / FOLDER_MARK).symlink_to(finished_run / FOLDER_MARK)  # a link does not make a folder examiner's
    assert not is_marked(copy)


def test_compare_out_replaces_its_own_file_but_not_a_users(sample_run: Path, tmp_path: Path, capsys,  # noqa: F811
                                                           caplog) -> None:
    out = tmp_path / "compare.md"
    assert run_cli(["compare", str(sample_run), "--out", str(out)], capsys, caplog)[0] == 0
    assert run_cli(["compare", str(sample_run), "--out", str(out)], capsys, caplog)[0] == 0  # its own: replaced
    out.write_text("edited by me\n", encoding="utf-8")
    code, lines, _ = run_cli(["compare", str(sample_run), "--out", str(out)], capsys, caplog)
    assert_one_error(code, lines, str(out), "did not write")
    assert out.read_text(encoding="utf-8") == "edited by me\n"
    theirs = tmp_path / "theirs.md"
    (tmp_path / "theirs.json").write_text("{}", encoding="utf-8")  # a sibling compare would write
    code, lines, _ = run_cli(["compare", str(sample_run), "--out", str(theirs)], capsys, caplog)
    assert_one_error(code, lines, "theirs.json", "did not write")
    assert not theirs.exists() and (tmp_path / "theirs.json").read_text(encoding="utf-8") == "{}"


@pytest.mark.parametrize("fmt", ["inspect", "otel"])
def test_export_log_refuses_to_overwrite_a_users_file(fmt: str, sample_run: Path, tmp_path: Path, capsys,  # noqa: F811
                                                     caplog) -> None:
    pytest.importorskip("opentelemetry.sdk") if fmt == "otel" else None
    out = tmp_path / "log.json"
    out.write_text("mine\n", encoding="utf-8")
    code, lines, _ = run_cli(["export", str(sample_run), "--to", fmt, str(out)], capsys, caplog)
    assert_one_error(code, lines, str(out), "did not write")
    assert out.read_text(encoding="utf-8") == "mine\n"
    out.unlink()
    for _ in range(2):  # a new file, then the one examiner wrote: both fine
        assert run_cli(["export", str(sample_run), "--to", fmt, str(out)], capsys, caplog)[0] == 0
    assert json.loads(out.read_text(encoding="utf-8"))
    assert out.name in json.loads((tmp_path / WRITTEN).read_text(encoding="utf-8"))


def test_review_sheet_refuses_to_overwrite_a_users_file(sample_run_copy: Path, tmp_path: Path, capsys,  # noqa: F811
                                                        caplog) -> None:
    sheet = tmp_path / "sheet.jsonl"
    sheet.write_text("my labels\n", encoding="utf-8")
    code, lines, _ = run_cli(["review", str(sample_run_copy), "--sample", "3", "--sheet", str(sheet)], capsys, caplog)
    assert_one_error(code, lines, "--sheet", str(sheet), "did not write")
    assert sheet.read_text(encoding="utf-8") == "my labels\n"
    assert not (sample_run_copy / "human_sample.jsonl").exists()  # refused before the draw


def test_judge_stats_out_refuses_to_overwrite_a_users_report(tmp_path: Path, capsys, caplog) -> None:
    judgments = tmp_path / "j.jsonl"
    judgments.write_text('{"id": "a", "verdict": "A", "label": "A"}\n{"id": "b", "verdict": "B", "label": "A"}\n',
                         encoding="utf-8")
    out = tmp_path / "stats"
    assert run_cli(["judge-stats", str(judgments), "--out", str(out)], capsys, caplog)[0] == 0
    assert run_cli(["judge-stats", str(judgments), "--out", str(out)], capsys, caplog)[0] == 0  # its own files
    (out / "report.md").write_text("my notes\n", encoding="utf-8")
    before = (out / "report.json").read_bytes()
    code, lines, _ = run_cli(["judge-stats", str(judgments), "--out", str(out)], capsys, caplog)
    assert_one_error(code, lines, "report.md", "did not write")
    assert (out / "report.md").read_text(encoding="utf-8") == "my notes\n"
    assert (out / "report.json").read_bytes() == before  # nothing written before the refusal
