"""The user's files and run folders (issue 25): no command deletes a file it did not write; input is checked
before a run folder is made; a run that stopped before its first model call starts again in the same
folder; a run folder without its checkpoints.sqlite still resumes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from examiner.exam.demo import clear_earlier_demo
from examiner.core import rundir
from examiner.core.owned import FOLDER_MARK
from examiner.core.records import UnitOutcome
from examiner.core.rundir import RunDir
from examiner.core.errors import UserError
from examiner.llm.ledger import answered
from tests.helpers.cli_runs import as_killed, assert_one_error, run_cli


# --- examiner demo --out ----------------------------------------------------------------------------------

def test_demo_refuses_a_folder_holding_the_users_files(tmp_path: Path, capsys, caplog) -> None:
    out = tmp_path / "mine"
    (out / "notes").mkdir(parents=True)
    (out / "thesis.tex").write_text("years of work", encoding="utf-8")
    (out / "notes" / "a.md").write_text("more work", encoding="utf-8")
    code, lines, _ = run_cli(["demo", "--out", str(out), "--corpus", "corpora/examiner-handbook"], capsys, caplog)
    assert_one_error(code, lines, str(out), "notes", "thesis.tex", "new or empty folder")
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "years of work"
    assert (out / "notes" / "a.md").is_file()
    assert sorted(p.name for p in out.iterdir()) == ["notes", "thesis.tex"]


def test_demo_refuses_an_exam_run_it_did_not_make(finished_run: Path, tmp_path: Path, capsys, caplog) -> None:  # noqa: F811
    out = tmp_path / "exam"
    shutil.copytree(finished_run, out)
    before = sorted(p.name for p in out.iterdir())
    code, lines, _ = run_cli(["demo", "--out", str(out), "--corpus", "corpora/examiner-handbook"], capsys, caplog)
    assert_one_error(code, lines, str(out), "did not make")
    assert sorted(p.name for p in out.iterdir()) == before


def test_demo_replaces_only_the_files_of_its_own_earlier_run(finished_run: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "demo"
    shutil.copytree(finished_run, out)
    request = json.loads((out / rundir.REQUEST).read_text(encoding="utf-8"))
    (out / rundir.REQUEST).write_text(json.dumps({**request, "demo": True}), encoding="utf-8")
    clear_earlier_demo(out)
    assert sorted(p.name for p in out.iterdir()) in ([FOLDER_MARK], sorted([FOLDER_MARK, rundir.LOCK]))
    # the same demo folder with a file of the user's in it: refused, nothing removed
    shutil.rmtree(out)
    shutil.copytree(finished_run, out)
    (out / rundir.REQUEST).write_text(json.dumps({**request, "demo": True}), encoding="utf-8")
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UserError, match="keep.txt"):
        clear_earlier_demo(out)
    assert (out / "keep.txt").is_file() and (out / rundir.UNITS).is_file()


# --- input checked before a run folder exists --------------------------------------------------------------

def test_a_corpus_of_binary_and_unsupported_files_leaves_no_run_folder(config_file: Path, tmp_path: Path,  # noqa: F811
                                                                       capsys, caplog) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.txt").write_bytes(bytes(range(256)) * 40)
    (junk / "b.md").write_bytes(b"\x00\x01\x02PK\x03\x04" * 500)
    (junk / "c.xyz").write_text("unsupported", encoding="utf-8")
    out = tmp_path / "run"
    for _ in range(2):  # and again: the same one line, not a refusal to write into the folder
        code, lines, _ = run_cli(["run", str(junk), "--config", str(config_file), "--quiet", "--out", str(out)],
                                 capsys, caplog)
        errors = [line for line in lines if line.startswith("examiner: error:")]
        assert code == 2 and len(errors) == 1, lines
        assert "the corpus is empty" in errors[0] and "resume" not in errors[0]
        assert not out.exists()


def test_a_run_that_failed_before_its_first_model_call_starts_again_in_its_folder(
        corpus: Path, config_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        capsys, caplog) -> None:
    import errno

    real = rundir.append_jsonl

    def full(path, rows):  # type: ignore[no-untyped-def]
        if Path(path).name == rundir.UNITS:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, rows)

    monkeypatch.setattr(rundir, "append_jsonl", full)
    out = tmp_path / "run"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert_one_error(code, lines, "disk full")
    assert RunDir(out).read_info().status == "failed" and not RunDir(out).ledger_records()
    (out / "user-notes.txt").write_text("mine", encoding="utf-8")  # a user's file: the folder is not restarted
    monkeypatch.undo()
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert_one_error(code, lines, "not empty")
    (out / "user-notes.txt").unlink()
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert code == 0, lines
    assert RunDir(out).read_info().status == "completed"


def test_a_run_that_made_model_calls_is_not_restarted(finished_run: Path, corpus: Path, config_file: Path,  # noqa: F811
                                                      tmp_path: Path, capsys, caplog) -> None:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    info = RunDir(out).read_info()
    info.status = "failed"
    RunDir(out).write_info(info)
    before = (out / rundir.LEDGER).read_bytes()
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert_one_error(code, lines, "not empty", f"examiner resume {out}")
    assert (out / rundir.LEDGER).read_bytes() == before


# --- a run folder without its checkpoints --------------------------------------------------------------------

def test_a_run_without_checkpoints_resumes_from_its_records_without_paying_again(
        finished_run: Path, tmp_path: Path, capsys, caplog) -> None:  # noqa: F811
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    as_killed(out)
    outcomes = {key: o.status for key, o in RunDir(out).records(UnitOutcome).items()}
    rows = len(RunDir(out).ledger_records())
    (out / rundir.CHECKPOINTS).unlink()
    code, lines, _ = run_cli(["resume", str(out)], capsys, caplog)
    assert code == 0, lines
    assert RunDir(out).read_info().status == "completed"
    assert {key: o.status for key, o in RunDir(out).records(UnitOutcome).items()} == outcomes
    again = answered(RunDir(out).ledger_records()[rows:])
    assert again and all(row.cache_hit for row in again)  # every reply came from the cache
    assert (out / rundir.CHECKPOINTS).is_file()
