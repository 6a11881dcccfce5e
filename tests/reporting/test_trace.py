"""`examiner trace RUN_DIR ID`: a unit or a question followed through the run's records (the hand-written
sample run of tests.helpers.sample_run, with a passages.jsonl carrying pages and one person's override)."""

from __future__ import annotations

from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core.overrides import OverrideRecord
from examiner.core.records import QuestionRecord, UnitRecord, VerdictRecord
from examiner.core.rundir import RunDir
from examiner.corpus.reading import load_corpus
from tests.helpers.sample_run import write_sample_run


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    path = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    store = RunDir(path)
    store.write_passages({"id": p.id, "document": p.document, "start": p.start, "end": p.end, "text": p.text,
                          "page": 7} for p in load_corpus(tmp_path / "corpus").passages)
    return path


def vienna(run: Path) -> tuple[UnitRecord, list[VerdictRecord]]:
    store = RunDir(run)
    unit = next(u for u in store.records(UnitRecord).values() if u.text.startswith("Vienna"))
    return unit, [v for v in store.records(VerdictRecord).values() if v.unit_id == unit.id]


def test_trace_of_a_unit_shows_sources_questions_verdicts_and_overrides(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unit, verdicts = vienna(run)
    wrong = next(v for v in verdicts if v.verdict == "incorrect")
    RunDir(run).append_override(OverrideRecord(question_id=wrong.question_id, unit_id=unit.id,
                                               verdict_before="incorrect", verdict="correct", reason="the answer names Vienna too", who="ana",
                                               at="2026-11-22T18:00:00Z"))
    assert main(["trace", str(run), unit.id]) == 0
    out = capsys.readouterr().out
    src = unit.sources[0]
    assert out.splitlines()[0] == f"unit {unit.id}: {unit.text}"
    assert f"source {src.document}, page 7, chars {src.start}-{src.end}" in out
    assert f": {unit.text}" in out.splitlines()[1]  # the span read from passages.jsonl is the unit's text
    questions = {v.question_id for v in verdicts}
    assert questions and all(f"question {q} " in out for q in questions)
    for v in verdicts:
        assert f"verdict on {unit.id}: {v.verdict}: {v.reason}" in out
    assert f"override on {unit.id}: incorrect -> correct by ana" in out


def test_trace_of_a_question_lists_its_units_answers_and_verdicts(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unit, verdicts = vienna(run)
    question = RunDir(run).records(QuestionRecord)[verdicts[0].question_id]
    assert main(["trace", str(run), question.id]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"question {question.id} ") and question.text in out
    for unit_id in question.targets:
        assert f"  unit {unit_id}: " in out
    on_question = [v for v in RunDir(run).records(VerdictRecord).values() if v.question_id == question.id]
    assert on_question and all(f"verdict on {v.unit_id}: {v.verdict}" in out for v in on_question)
    assert "override" not in out


def test_unknown_id_is_one_line_and_exit_2(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", str(run), "no-such-id"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().count("\n") == 0 and "no unit or question with id no-such-id" in captured.err


def test_not_a_run_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", str(tmp_path), "u1"]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_the_question_version_in_force_decides(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A question rewritten without the unit among its targets (the last write wins) no longer lists it."""
    unit, verdicts = vienna(run)
    store = RunDir(run)
    question = store.records(QuestionRecord)[verdicts[0].question_id]
    store.append_records(QuestionRecord, [question.model_copy(update={
        "targets": [t for t in question.targets if t != unit.id], "dropped_targets": [unit.id]})], repair=True)
    assert main(["trace", str(run), unit.id]) == 0
    out = capsys.readouterr().out
    assert f"question {question.id} " not in out
    assert all(f"question {v.question_id} " in out for v in verdicts if v.question_id != question.id)
