"""The run directory and its one JSONL policy: a torn last line (a writer killed mid-record) is tolerated
and counted; any other bad line is a CorruptRunFile naming file:line, shown by the CLI as one line with
exit 2; before appending, a torn tail moves to `<file>.torn` so the next record starts on its own line.
Every reader of a run (report, `meta --exam`, meta's resumable stores, `examiner cost`) is held to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from examiner.cli.main import main
from examiner.core.jsonl import CorruptRunFile, read_jsonl, repair_tail
from examiner.core.records import ClusterRecord, ClusterRound, MemberVerdict, RunInfo, UnitRecord, VerdictRecord
from examiner.core.rundir import LEDGER, VERDICTS, RunDir
from examiner.core.errors import UserError
from examiner.exam.run_writer import RunStore
from examiner.meta.exam_source import load_exam_triples
from examiner.meta.records_file import JsonlStore
from examiner.reporting import load_run
from tests.helpers.sample_run import write_sample_run


class Row(BaseModel):
    id: str
    text: str


def _unit(n: int) -> UnitRecord:
    return UnitRecord(id=f"u{n}", text=f"Unit {n}.", sources=[], token_count=3)


def _damage_middle(path: Path) -> int:
    """Overwrite the second line with garbage; returns its 1-based line number."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = '{"id": "broken", \n'
    path.write_text("".join(lines), encoding="utf-8")
    return 2


def test_torn_last_line_is_tolerated_and_counted(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    path = run.record_file(UnitRecord)
    path.write_text(_unit(1).model_dump_json() + "\n" + _unit(2).model_dump_json()[:12], encoding="utf-8")
    assert list(run.records(UnitRecord)) == ["u1"]
    assert run.torn == {"units.jsonl": 1}
    read = read_jsonl(path)
    assert read.torn_tail and len(read.rows) == 1


def test_streamed_records_follow_the_same_policy(tmp_path: Path) -> None:
    """RunDir.iter_records yields what `records` reads, one at a time, counting a torn tail the same way;
    lines end at newlines only, so a text holding U+2028 (written raw by pydantic) stays one record."""
    run = RunDir(tmp_path)
    odd = UnitRecord(id="u0", text="first\u2028second\x85third", sources=[], token_count=3)
    run.append_records(UnitRecord, [odd, _unit(1)], repair=False)
    with run.record_file(UnitRecord).open("a", encoding="utf-8") as handle:
        handle.write(_unit(2).model_dump_json()[:12])
    streamed = run.iter_records(UnitRecord)
    assert next(streamed) == odd and run.torn == {}
    assert [u.id for u in streamed] == ["u1"] and run.torn == {"units.jsonl": 1}
    assert list(RunDir(tmp_path).records(UnitRecord)) == ["u0", "u1"]


def test_a_complete_last_line_without_newline_is_a_record(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}', encoding="utf-8")
    read = read_jsonl(path)
    assert [r["a"] for r in read.rows] == [1, 2] and not read.torn_tail
    assert repair_tail(path) is None  # terminated, not cut
    assert path.read_text(encoding="utf-8") == '{"a": 1}\n{"a": 2}\n'
    assert not (tmp_path / "rows.jsonl.torn").exists()


def test_mid_file_corruption_names_file_and_line(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    path = run.record_file(UnitRecord)
    path.write_text("".join(_unit(n).model_dump_json() + "\n" for n in range(4)), encoding="utf-8")
    line = _damage_middle(path)
    with pytest.raises(CorruptRunFile, match=rf"units\.jsonl:{line}: not a valid record"):
        run.records(UnitRecord)


def test_a_bad_record_on_a_finished_last_line_is_corruption(tmp_path: Path) -> None:
    """The newline was written, so the writer finished that line: only an unterminated line is torn."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(CorruptRunFile, match=r"rows\.jsonl:2:"):
        read_jsonl(path)


def test_repair_tail_keeps_the_fragment_and_appends_on_a_new_line(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    path = store.path(UnitRecord)
    path.write_text(_unit(1).model_dump_json() + "\n" + '{"id": "u2", "te', encoding="utf-8")
    store.append([_unit(3)])
    assert (tmp_path / "units.jsonl.torn").read_text(encoding="utf-8") == '{"id": "u2", "te\n'
    assert [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()] == ["u1", "u3"]
    assert list(RunDir(tmp_path).records(UnitRecord)) == ["u1", "u3"]
    assert repair_tail(path) is None  # nothing left to repair


def test_run_store_round_trips_info_and_clusters(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_info(RunInfo(run_id="r1", mode="refeval", targets=["t/1"], corpus_paths=[]))
    assert store.read_info().run_id == "r1" and not (tmp_path / "run.json.tmp").exists()
    rnd = ClusterRound(round=2, target="t/1", k=1, clusters=[ClusterRecord(id="c", center="u1", members=["u1"])])
    store.write_clusters(rnd)
    assert RunDir(tmp_path).read_clusters() == {"t/1": [rnd]}
    store.write_passages([{"id": "p1", "document": "d", "start": 0, "end": 3, "text": "abc"}])
    assert store.read_passages()["p1"]["text"] == "abc"


def test_damaged_config_is_one_line_user_error(tmp_path: Path) -> None:
    assert RunDir(tmp_path).read_config() == {}
    (tmp_path / "config.yaml").write_text("exam: [unclosed\n", encoding="utf-8")
    with pytest.raises(UserError, match="config.yaml: not valid YAML"):
        RunDir(tmp_path).read_config()


def test_damaged_clustering_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "clusters" / "t"
    folder.mkdir(parents=True)
    (folder / "round-1.json").write_text("{half", encoding="utf-8")
    with pytest.raises(CorruptRunFile, match="round-1.json"):
        RunDir(tmp_path).read_clusters()


def test_report_counts_torn_lines_of_a_killed_run(tmp_path: Path) -> None:
    run_dir = write_sample_run(tmp_path / "run", tmp_path / "corpus")  # its ledger ends in a torn line
    with (run_dir / VERDICTS).open("a", encoding="utf-8") as handle:
        handle.write('{"id": "v-torn", "ans')
    run = load_run(run_dir)
    assert run.unreadable_lines == {LEDGER: 1, VERDICTS: 1}


def test_cli_report_on_damaged_verdicts_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    line = _damage_middle(run_dir / VERDICTS)
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("examiner: error: ") and f"{run_dir / VERDICTS}:{line}:" in err


def test_cli_cost_on_damaged_ledger_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    assert main(["cost", str(run_dir)]) == 0  # the torn last ledger line is tolerated
    capsys.readouterr()
    _damage_middle(run_dir / LEDGER)
    assert main(["cost", str(run_dir)]) == 2
    assert f"{run_dir / LEDGER}:2:" in capsys.readouterr().err


def test_meta_exam_source_reads_through_the_same_policy(tmp_path: Path) -> None:
    run_dir = write_sample_run(tmp_path / "run", tmp_path / "corpus")
    verdicts = run_dir / VERDICTS
    items, own = load_exam_triples(run_dir)
    with verdicts.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "v-torn"')  # a killed exam: tolerated
    assert len(load_exam_triples(run_dir)[0]) == len(items) == len(own)
    _damage_middle(verdicts)
    with pytest.raises(CorruptRunFile, match=r"verdicts\.jsonl:2:"):
        load_exam_triples(run_dir)
    verdicts.unlink()
    with pytest.raises(UserError, match="lacks verdicts.jsonl"):
        load_exam_triples(run_dir)


def test_meta_store_counts_torn_line_and_repairs_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text(Row(id="j1", text="x").model_dump_json() + "\n" + '{"id": "j2", "te', encoding="utf-8")
    store: JsonlStore[Row] = JsonlStore(path, Row)
    assert list(store.records) == ["j1"] and store.torn_lines == 1
    store.add(Row(id="j3", text="y"))
    store.close()
    assert list(JsonlStore(path, Row).records) == ["j1", "j3"]
    assert (tmp_path / "judgments.jsonl.torn").read_text(encoding="utf-8") == '{"id": "j2", "te\n'
    _damage_middle(path)
    with pytest.raises(CorruptRunFile, match=r"judgments\.jsonl:2:"):
        JsonlStore(path, Row)


def test_verdict_records_file_name_is_the_one_the_store_writes(tmp_path: Path) -> None:
    assert RunStore(tmp_path).path(VerdictRecord) == tmp_path / VERDICTS


def test_no_verdict_on_disk_is_a_null_label_with_its_reason() -> None:
    """Exam verdicts share the judge and meta records' shape: `verdict` null and `unscored` saying why."""
    fields = dict(id="v", answer_id="a", question_id="q", unit_id="u", round=1, target="t")
    record = VerdictRecord(verdict="unscored", reason="no tags", members={"m": MemberVerdict(verdict="correct", reason="ok")},
                           **fields)
    on_disk = json.loads(record.model_dump_json())
    assert (on_disk["verdict"], on_disk["unscored"]) == (None, "no tags") and "type" not in on_disk
    assert (on_disk["members"]["m"]["verdict"], on_disk["members"]["m"]["unscored"]) == ("correct", None)
    assert VerdictRecord.model_validate(on_disk) == record
    for older in ("unscored", "unparseable"):  # runs written before
        assert VerdictRecord.model_validate({**fields, "type": older, "reason": "x"}).verdict == "unscored"
