"""Hostile configuration, flags and conditions (issue 25): each is one line on stderr and a known exit code,
never a traceback, and a run that stopped on them can be continued.

- a config value of the wrong type (`budget_usd: "lots"`), a YAML config nested thousands of levels deep,
  an integer YAML cannot read, a non-finite `--budget-usd`: one line naming the setting or flag, exit 2,
  no run folder;
- `--seed 4294967296`: accepted (reduced modulo 2**30 for FAISS) and the exam finishes;
- a full disk (ENOSPC) in the middle of a run: one line, exit 2, and `examiner resume` afterwards finishes;
- any other error: one line `examiner: internal error: ...`, exit 70, the full trace in the run folder's
  examiner.log;
- a record holding a NUL or another character XML cannot hold: the GraphML writer, `report` and
  `resume` still work;
- a 100 kB request header to `examiner view`: 431, no traceback logged, and the server keeps serving.
"""

from __future__ import annotations

import errno
import json
import logging
from pathlib import Path

import networkx as nx
import pytest
from aiohttp.test_utils import TestClient, TestServer

from examiner.core.config import SEED_MODULUS, load_settings
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.core.errors import EXIT_INTERNAL_ERROR, ConfigError
from examiner.reporting.provenance import build_provenance
from tests.helpers.sample_run import write_sample_run
from examiner.reporting.view_server import ReviewServer
from tests.helpers.cli_runs import assert_one_error, run_cli


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# --- configuration values and flags ----------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ('budget_usd: "lots"\n', ["budget_usd", "must be a number", "'lots'"]),
    ("budget_usd: -1\n", ["budget_usd", "greater than or equal to 0"]),
    ("budget_usd: .nan\n", ["budget_usd", "finite"]),
    ("exam:\n  max_rounds: [1, 2]\n", ["exam.max_rounds", "whole number"]),
    ("exam: 3\n", ["exam", "mapping"]),
    ("endpoints:\n  x:\n    max_concurrency: many\n", ["endpoints.x.max_concurrency", "'many'"]),
    ("options: " + "[" * 3000 + "]" * 3000 + "\n", ["nested too deeply"]),
    ("".join("  " * i + f"k{i}:\n" for i in range(3000)), ["nested too deeply"]),
    ("exam:\n  seed: " + "9" * 5000 + "\n", ["hostile.yaml", "cannot read"]),
])
def test_hostile_config_values_are_one_line_and_leave_no_run_folder(text: str, words: list[str], corpus: Path,
                                                                   tmp_path: Path, capsys, caplog) -> None:
    config = _config(tmp_path, text)
    out = tmp_path / "never"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert_one_error(code, lines, *words)
    assert len(lines[0]) < 400
    assert not out.exists()


def test_validation_names_the_setting_and_the_value() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, environ={"EXAMINER_BUDGET_USD": "5"}, budget_usd=None).merged({"budget_usd": "lots"})
    assert str(caught.value) == "invalid configuration: budget_usd: must be a number, got 'lots'"


@pytest.mark.parametrize("flag, value, words", [
    ("--budget-usd", "nan", ["--budget-usd", "finite", "nan"]),
    ("--budget-usd", "inf", ["--budget-usd", "finite", "inf"]),
    ("--max-corpus-mb", "inf", ["--max-corpus-mb inf", "finite"]),
])
def test_non_finite_flags_are_one_line(flag: str, value: str, words: list[str], corpus: Path, config_file: Path,
                                       tmp_path: Path, capsys, caplog) -> None:
    out = tmp_path / "never"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out),
                              flag, value], capsys, caplog)
    assert_one_error(code, lines, *words)
    assert not out.exists()


def test_a_seed_of_any_size_is_accepted_and_the_exam_finishes(corpus: Path, config_file: Path, tmp_path: Path,
                                                              capsys, caplog) -> None:
    assert load_settings(None).merged({"exam": {"seed": 4294967296 + 7}}).exam.seed == 7
    assert load_settings(None).merged({"exam": {"seed": 12345}}).exam.seed == 12345  # small seeds unchanged
    assert SEED_MODULUS == 2**30
    out = tmp_path / "big-seed"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out),
                              "--seed", "4294967296"], capsys, caplog)
    assert code == 0, lines
    assert RunDir(out).read_info().status == "completed"
    assert RunDir(out).read_config()["exam"]["seed"] == 0


# --- a full disk, and errors nobody expected ----------------------------------------------------------------

def _fail_once(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Make the first append to the run file `name` fail as a full disk does (no file name on the error)."""
    real = rundir.append_jsonl
    failed: list[int] = []

    def append(path: str | Path, rows):  # type: ignore[no-untyped-def]
        if Path(path).name == name and not failed:
            failed.append(1)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, rows)

    monkeypatch.setattr(rundir, "append_jsonl", append)
    return failed


def test_a_full_disk_mid_run_is_one_line_and_resume_finishes(corpus: Path, config_file: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch, capsys, caplog) -> None:
    out = tmp_path / "full"
    failed = _fail_once(monkeypatch, rundir.ANSWERS)
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert failed
    assert_one_error(code, lines, "disk full while writing", str(out), f"examiner resume {out}")
    assert (out / rundir.LEDGER).read_text(encoding="utf-8")  # it failed after paying for calls
    monkeypatch.undo()  # space freed
    code, lines, _ = run_cli(["resume", str(out), "--quiet"], capsys, caplog)
    assert code == 0, lines
    assert RunDir(out).read_info().status == "completed"
    assert (out / rundir.REPORT_JSON).is_file()


def test_a_full_disk_as_sqlite_says_it_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys, caplog) -> None:
    import sqlite3

    from examiner.cli.commands import report as report_command

    run = write_sample_run(tmp_path / "run", tmp_path / "corpus")

    def full(args):  # type: ignore[no-untyped-def]
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(report_command, "run_report", full)
    code, lines, _ = run_cli(["report", str(run)], capsys, caplog)
    assert_one_error(code, lines, "disk full while writing")


def test_an_unexpected_error_is_one_line_with_the_trace_in_the_run_log(corpus: Path, config_file: Path,
                                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys, caplog) -> None:
    from examiner.exam import runner

    def broken(run_dir, **_):  # type: ignore[no-untyped-def]
        raise RuntimeError("reports broke at http://user:hunter2@example.invalid/v1")

    monkeypatch.setattr(runner, "build_reports", broken)
    out = tmp_path / "bug"
    code, lines, _ = run_cli(["run", str(corpus), "--config", str(config_file), "--quiet", "--out", str(out)],
                             capsys, caplog)
    assert code == EXIT_INTERNAL_ERROR, lines
    assert len(lines) == 1 and lines[0].startswith("examiner: internal error: RuntimeError: reports broke"), lines
    assert f"full trace in {out / rundir.LOG}" in lines[0] and "hunter2" not in lines[0]
    trace = (out / rundir.LOG).read_text(encoding="utf-8")
    assert "Traceback" in trace and "build_reports" not in lines[0] and "in broken" in trace
    assert "hunter2" not in trace and "http://***@example.invalid/v1" in trace
    assert f"examiner run {corpus}" in trace  # the command that failed heads the trace


def test_an_unexpected_error_without_a_run_folder_goes_to_a_temporary_log(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys, caplog) -> None:
    from examiner.cli.commands import setup

    def broken(settings):  # type: ignore[no-untyped-def]
        raise KeyError("surprise")

    monkeypatch.setattr(setup, "model_tables", broken)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code, lines, _ = run_cli(["models"], capsys, caplog)
    assert code == EXIT_INTERNAL_ERROR and len(lines) == 1, lines
    assert lines[0].startswith("examiner: internal error: KeyError: 'surprise' (full trace in ")
    logs = list(tmp_path.glob("examiner-*.log"))
    assert len(logs) == 1 and "Traceback" in logs[0].read_text(encoding="utf-8")
    assert str(logs[0]) in lines[0]


# --- characters XML cannot hold ----------------------------------------------------------------------------

def test_records_with_nul_and_control_characters_still_make_a_graphml_and_reports(tmp_path: Path, capsys,
                                                                                  caplog) -> None:
    run = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    for name in (rundir.UNITS, rundir.QUESTIONS, rundir.ANSWERS):
        rows = [json.loads(line) for line in (run / name).read_text(encoding="utf-8").splitlines()]
        for row in rows:
            row["text"] = "nul\u0000 bell\u0007 esc\u001b ok \ufffe end"
        (run / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert "\\u0000" in (run / rundir.UNITS).read_text(encoding="utf-8")
    path = build_provenance(run)
    assert path is not None
    graph = nx.read_graphml(path)
    texts = [data.get("text", "") for _, data in graph.nodes(data=True)]
    assert any(t.startswith("nul\ufffd bell\ufffd esc\ufffd ok \ufffd end") for t in texts)
    code, lines, _ = run_cli(["report", str(run)], capsys, caplog)
    assert code == 0, lines
    assert not any("Traceback" in line for line in lines)


# --- the review server ------------------------------------------------------------------------------------

async def test_view_answers_a_huge_header_431_without_a_traceback_and_keeps_serving(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    run = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    server = ReviewServer(run, who="ana")
    client = TestClient(TestServer(server.app(), host="127.0.0.1"))
    await client.start_server()
    server.port = client.port
    try:
        with caplog.at_level(logging.DEBUG):
            big = await client.get("/", headers={"X-Big": "a" * 100_000})
            assert big.status == 431
            huge = await client.get("/", headers={"X-Huge": "b" * 2_000_000})
            assert huge.status == 400
            again = await client.get("/")
            assert again.status == 200
        assert not any(r.exc_info for r in caplog.records), [r.getMessage() for r in caplog.records]
        assert not any("Traceback" in r.getMessage() or len(r.getMessage()) > 400 for r in caplog.records)
    finally:
        await client.close()


def test_run_folder_log_name_is_an_exam_output() -> None:
    assert rundir.exam_output(rundir.LOG)
