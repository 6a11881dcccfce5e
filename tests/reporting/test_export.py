"""`examiner export`: the run as a dataset (JSONL, Parquet, a `datasets` folder) and its card, round-tripped
against the run's own records."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core.records import AnswerRecord, QuestionRecord, UnitRecord, VerdictRecord
from examiner.core.rundir import RunDir
from examiner.reporting.exports import COLUMNS, UNKNOWN_LICENCE
from tests.helpers.sample_run import write_sample_run

NAMES = [name for name, _ in COLUMNS]


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    """The sample run (two targets, records written twice as after a resume) plus a question whose answer
    never came and one unscored verdict."""
    run = write_sample_run(tmp_path / "run")
    files = RunDir(run)
    question = next(iter(files.records(QuestionRecord).values()))
    files.append_records(QuestionRecord, [question.model_copy(update={"id": "q-unanswered", "round": 9})], repair=False)
    verdict = next(iter(files.records(VerdictRecord).values()))
    files.append_records(VerdictRecord, [verdict.model_copy(update={"type": "unscored", "reason": "reply did not parse"})],
                         repair=False)
    return run


def _expected(run: Path) -> tuple[int, dict[str, VerdictRecord]]:
    files = RunDir(run)
    questions = files.records(QuestionRecord)
    return sum(len(q.targets) for q in questions.values()), files.records(VerdictRecord)


def _check_rows(rows: list[dict], run: Path) -> None:
    n_rows, verdicts = _expected(run)
    assert len(rows) == n_rows
    assert all(list(r) == NAMES for r in rows)
    units = RunDir(run).records(UnitRecord)
    answers = RunDir(run).records(AnswerRecord)
    # every verdict of the run is exported exactly once, with its label or its unscored reason
    exported = {r["verdict_id"]: r for r in rows if r["verdict_id"]}
    assert set(exported) == set(verdicts)
    for vid, v in verdicts.items():
        row = exported[vid]
        assert (row["unit_id"], row["answer_id"], row["target"]) == (v.unit_id, v.answer_id, v.target)
        assert row["verdict"] == (None if v.type == "unscored" else v.type)
        assert row["unscored"] == (v.reason if v.type == "unscored" else None)
        assert row["judge_reason"] == v.reason and row["answer_text"] == answers[v.answer_id].text
        unit = units[v.unit_id]
        assert row["unit_text"] == unit.text and row["document"] == unit.sources[0].document
        assert (row["start"], row["end"]) == (unit.sources[0].start, unit.sources[0].end) and row["page"] is None
        assert row["sources"][0]["passage_id"] == unit.sources[0].passage_id
    missing = [r for r in rows if r["question_id"] == "q-unanswered"]
    assert missing and all(r["verdict"] is None and r["unscored"] == "no answer recorded" and r["answer_id"] is None
                           for r in missing)
    assert sum(1 for r in rows if r["unscored"] == "reply did not parse") == 1


def test_jsonl_round_trip_and_card(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "jsonl"
    assert main(["export", str(run_dir), "--to", "jsonl", str(out)]) == 0
    assert "data.jsonl, README.md" in capsys.readouterr().out
    rows = [json.loads(line) for line in (out / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    _check_rows(rows, run_dir)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: unknown\n")
    assert f"corpus licence: {UNKNOWN_LICENCE}" in card
    for needle in ("## Corpus", "| target | alpha |", "| target | beta |", "not recorded by this run",
                   "| alpha | ", "| page | integer |"):
        assert needle in card, needle
    assert main(["export", str(run_dir), "--to", "jsonl", str(out)]) == 2  # never into a folder holding files
    assert "not an empty folder" in capsys.readouterr().err


def test_parquet_round_trip_with_corpus_licence(run_dir: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    (tmp_path / "sample-corpus" / "SOURCE.md").write_text("# sample\n\n- Licence: MIT (the sample text)\n",
                                                         encoding="utf-8")
    out = tmp_path / "parquet"
    assert main(["export", str(run_dir), "--to", "parquet", str(out), "--corpus", str(tmp_path / "sample-corpus")]) == 0
    _check_rows(pq.read_table(out / "data.parquet").to_pylist(), run_dir)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: mit\n") and "corpus licence: MIT (the sample text)" in card


def test_the_card_reads_no_licence_from_the_folders_run_json_names(run_dir: Path, tmp_path: Path) -> None:
    """run.json's corpus_paths may name any folder of the reader's: its LICENSE is read only when the user
    names that folder with --corpus."""
    (tmp_path / "sample-corpus" / "LICENSE").write_text("XSECRETX first line\n", encoding="utf-8")
    out = tmp_path / "jsonl"
    assert main(["export", str(run_dir), "--to", "jsonl", str(out)]) == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "XSECRETX" not in card and f"corpus licence: {UNKNOWN_LICENCE}" in card


def test_hf_folder_loads_with_datasets(run_dir: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "hf"
    assert main(["export", str(run_dir), "--to", "hf", str(out)]) == 0
    loaded = datasets.load_from_disk(str(out))
    assert loaded.column_names == NAMES
    _check_rows(loaded.to_list(), run_dir)
    assert (out / "README.md").is_file()


def test_prompts_version_recorded_by_the_exam_is_on_the_card(run_dir: Path, tmp_path: Path) -> None:
    files = RunDir(run_dir)
    files.write_info(files.read_info().model_copy(update={"prompts_sha256": "ab" * 32, "examiner_version": "9.9"}))
    out = tmp_path / "card"
    assert main(["export", str(run_dir), "--to", "jsonl", str(out)]) == 0
    assert f"sha256 {'ab' * 32} of the prompt files (examiner 9.9)" in (out / "README.md").read_text()


def test_missing_extra_is_one_line(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if the export extra were not installed
    assert main(["export", str(run_dir), "--to", "parquet", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'examiner[export]'" in err[0] and "pyarrow" in err[0]
    assert not (tmp_path / "p").exists()
    assert main(["export", str(tmp_path / "nowhere"), "--to", "jsonl", str(tmp_path / "j")]) == 2
    assert "run directory not found" in capsys.readouterr().err


def test_export_command_offers_exactly_the_formats_the_writer_writes() -> None:
    from examiner.cli.commands import export as command
    from examiner.reporting import exports as writer

    assert command.FORMATS == writer.FORMATS
