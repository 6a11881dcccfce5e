"""Row-level results: an exam run's units, verdicts, outcomes and model calls read as typed rows agree with
the run folder's own files (last write winning, a torn ledger line left out) and with its report; rows
turn into records and DataFrames, and say plainly when pandas is missing."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from examiner.api import CallCost, ExamResult, Rows, VerdictRow, read_exam
from examiner.core.errors import UserError
from examiner.exam.runner import build_reports
from tests.helpers.sample_run import write_sample_run


@pytest.fixture(scope="module")
def sample_exam(tmp_path_factory: pytest.TempPathFactory) -> ExamResult:
    root = tmp_path_factory.mktemp("rows")
    run = write_sample_run(root / "run", root / "corpus")
    build_reports(run)
    return read_exam(run)


def last_written(path: Path) -> dict[str, dict]:
    """A JSONL file's records by id, the last write winning (torn lines skipped)."""
    records: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        records[record["id"]] = record
    return records


def test_verdicts_are_the_files_records_last_write_winning(sample_exam: ExamResult) -> None:
    on_disk = last_written(sample_exam.run_dir / "verdicts.jsonl")
    verdicts = sample_exam.verdicts()
    assert isinstance(verdicts, Rows) and all(isinstance(v, VerdictRow) for v in verdicts)
    assert [v.id for v in verdicts] == list(on_disk)
    for row in verdicts:
        disk = on_disk[row.id]
        assert (row.target, row.unit_id, row.answer_id) == (disk["target"], disk["unit_id"], disk["answer_id"])
        assert row.verdict == (disk["verdict"] if disk["verdict"] is not None else "unscored")


def test_outcomes_and_units_add_up_to_the_reports_counts(sample_exam: ExamResult) -> None:
    units = sample_exam.units()
    assert len(units) == len(last_written(sample_exam.run_dir / "units.jsonl")) > 0
    assert all(u.documents and u.token_count > 0 for u in units)
    for target, figures in sample_exam.targets.items():
        statuses = [o.status for o in sample_exam.outcomes() if o.target == target]
        assert len(statuses) == len(units)
        assert (statuses.count("correct"), statuses.count("incorrect"), statuses.count("unanswered"),
                statuses.count("uncovered")) == (figures.correct, figures.incorrect, figures.unanswered,
                                                 figures.uncovered)


def test_costs_are_the_answered_calls_and_add_up_to_the_report(sample_exam: ExamResult) -> None:
    costs = sample_exam.costs()
    assert costs and all(isinstance(c, CallCost) for c in costs)
    assert sum(c.cost_usd for c in costs) == pytest.approx(sample_exam.cost_usd, abs=1e-6)
    lines = (sample_exam.run_dir / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    readable = []
    for line in lines:
        try:
            readable.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the torn last line a kill leaves
    answered = [r for r in readable if r.get("outcome", "ok") in ("ok", "reconciled")]
    assert len(costs) == len(answered)
    assert sum(c.prompt_tokens for c in costs) == sum(r.get("prompt_tokens", 0) for r in answered)


def test_records_and_frames_keep_every_field(sample_exam: ExamResult) -> None:
    verdicts = sample_exam.verdicts()
    fields = [f.name for f in dataclasses.fields(VerdictRow)]
    assert verdicts.columns == tuple(fields)
    assert verdicts.to_records()[0] == dataclasses.asdict(verdicts[0])
    frame = verdicts.to_pandas()
    assert list(frame.columns) == fields and len(frame) == len(verdicts)
    assert frame["verdict"].tolist() == [v.verdict for v in verdicts]
    empty = Rows(VerdictRow).to_pandas()
    assert list(empty.columns) == fields and len(empty) == 0
    head = verdicts[:2]
    assert isinstance(head, Rows) and list(head) == list(verdicts)[:2]


def test_to_pandas_without_pandas_says_how_to_get_it(sample_exam: ExamResult,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # what an environment without pandas gives
    rows = sample_exam.verdicts()
    with pytest.raises(ImportError, match="pip install pandas"):
        rows.to_pandas()
    assert rows.to_records()  # the plain records still work


def test_rows_are_frozen(sample_exam: ExamResult) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample_exam.verdicts()[0].verdict = "correct"  # type: ignore[misc]


def test_reading_a_folder_without_a_run_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no exam run"):
        read_exam(tmp_path)
