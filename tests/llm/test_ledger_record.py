"""The typed ledger record (examiner.core.ledger_record.LedgerRecord) writes the very lines the dict
writer wrote, and reads them back typed: old run folders read the same, and new lines are byte for byte
what a reader of the old format expects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.core.jsonl import CorruptRunFile
from examiner.core.ledger_record import LedgerRecord
from examiner.core.stages import Stage
from examiner.llm.ledger import Ledger, aggregate, read_ledger, settlement, spent_usd
from tests.helpers.ledger_kinds import write_every_kind

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "ledger" / "every_kind.jsonl"
"""Every record kind, as written by the writer that built records as dicts (tests/helpers/ledger_kinds.py)."""


def test_every_record_kind_is_written_byte_for_byte_as_before(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    write_every_kind(path)
    assert path.read_bytes() == OLD.read_bytes()


def test_an_old_ledger_reads_typed_and_writes_back_unchanged(tmp_path: Path) -> None:
    records = read_ledger(OLD)
    assert len(records) == 16
    assert {r.outcome for r in records} == {"started", "ok", "lost", "failed", "cancelled", "reconciled", "unknown"}
    ok = records[1]
    assert ok.stage is Stage.JUDGE and ok.repair == 1 and ok.reply_model == "sim-model-2026"
    assert (ok.prompt_tokens, ok.cached_tokens, ok.cost_usd) == (40, 8, pytest.approx(0.000132))
    assert records[3].batch and records[3].cache_key == "key-a3"
    assert records[9].stopped.startswith("budget")
    assert all(r.model_extra == {} for r in records), "every field the writer writes is named by the model"
    copy = Ledger(tmp_path / "copy.jsonl")
    for record in records:
        copy.append(record)
    copy.close()
    assert (tmp_path / "copy.jsonl").read_bytes() == OLD.read_bytes()


def test_a_line_from_before_the_newer_fields_reads_their_defaults() -> None:
    line = ('{"role": "candidate", "stage": "answer", "round": 1, "unit_ids": ["u1"], "endpoint": "e", '
            '"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.5, "cache_hit": false, "retired": 3}')
    record = LedgerRecord.model_validate_json(line)
    assert record.outcome == "ok" and record.cached_tokens == 0 and not record.batch and record.reply_model == ""
    assert record.model_extra == {"retired": 3}, "a field this version does not know is kept"
    assert not record.has("outcome") and "outcome" not in record.fields()
    old_stage = LedgerRecord.model_validate({"stage": "retired_stage"})
    assert old_stage.stage == "retired_stage" and not isinstance(old_stage.stage, Stage)


def test_the_file_reader_counts_as_records_validated_one_by_one() -> None:
    """read_ledger (validated from each line's text) and JSON objects validated at the edge with
    `model_validate` give the counting functions the same records."""
    records = read_ledger(OLD)
    rows = [LedgerRecord.model_validate(json.loads(line)) for line in OLD.read_text(encoding="utf-8").splitlines()]
    assert rows == records and [r.fields() for r in rows] == [r.fields() for r in records]
    assert spent_usd(records) == pytest.approx(spent_usd(rows))
    assert settlement(records) == settlement(rows)
    assert aggregate(records, ("stage", "batch")) == aggregate(rows, ("stage", "batch"))
    assert aggregate(records, ("stage",))[0]["stage"] == "judge" and type(aggregate(records, ("stage",))[0]["stage"]) is str


def test_a_record_read_from_a_line_keeps_the_order_of_its_keys() -> None:
    """A line's keys in an order of their own (not the model's): the record read from it equals the one
    validated from its mapping, and is written back, changed or not, in the line's order."""
    line = '{"outcome":"started","call_id":"c","worst_case_usd":0.5,"role":"judge","retired":1}'
    record = LedgerRecord.model_validate_json(line)
    assert record == LedgerRecord.model_validate(json.loads(line))
    assert record.model_dump_json() == line and record.has("retired") and not record.has("cost_usd")
    assert list(record.then(cost_usd=0.0).fields()) == ["outcome", "call_id", "worst_case_usd", "role", "retired",
                                                        "cost_usd"]
    assert record.without("outcome").model_dump_json() == '{"call_id":"c","worst_case_usd":0.5,"role":"judge","retired":1}'
    same_values = LedgerRecord.model_validate_json('{"call_id":"c","outcome":"started","worst_case_usd":0.5,'
                                                   '"role":"judge","retired":1}')
    assert same_values != record, "the same values in another order are another line"


def test_a_misspelt_field_never_reaches_the_ledger_and_a_damaged_line_is_named(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="cost_usdd"):
        LedgerRecord.build(role="judge", cost_usdd=1.0)
    with pytest.raises(TypeError, match="outcom"):
        LedgerRecord.build(role="judge").then(outcom="ok")
    bad = tmp_path / "ledger.jsonl"
    bad.write_text('{"role": "judge", "outcome": "ok"}\n{"role": "judge", "prompt_tokens": "many"}\n',
                   encoding="utf-8")
    with pytest.raises(CorruptRunFile, match="ledger.jsonl:2"):
        read_ledger(bad)
