"""`examiner judge` reads a dotted field key (`scores.coherence`) as metric-stats does, with the one shared
helper, and refuses in one line an option its method does not read instead of dropping it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.api.judging import JudgeOptions, judge
from examiner.corpus.record_fields import field_value
from examiner.judging.judgment_files import JudgmentFields, read_scores
from tests.helpers.cli_runs import assert_one_error, run_cli

ROWS = [{"id": f"s{i}", "meta": {"doc": f"d{i % 2}"}, "summary": f"A short summary number {i} (u{i}:known).",
         "source": f"The source text {i}.", "scores": {"coherence": 1 + i % 5, "relevance": 5 - i % 5}}
        for i in range(6)]


def write_rows(folder: Path) -> Path:
    data = folder / "summ.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return data


def test_field_value_reads_a_key_as_such_then_down_a_dotted_path() -> None:
    record = {"a.b": 1, "a": {"b": 2, "c": {"d": 3}}, "s": "text"}
    assert field_value(record, "a.b") == 1
    assert field_value(record, "a.c.d") == 3
    assert field_value(record, "a.x") is None and field_value(record, "s.t") is None


def test_judge_reads_a_dotted_human_field(tmp_path: Path) -> None:
    """G-Eval against scores.coherence: every row's human score is the nested value, so the report
    correlates the judge with it (before, the key was silently missing and no row had a human score)."""
    result = judge(JudgeOptions(data=str(write_rows(tmp_path)), method="geval", out=str(tmp_path / "out"),
                                output_field="summary", human_field="scores.coherence", group_field="meta.doc",
                                samples=3, simulate=True))
    records = [json.loads(line) for line in (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()]
    assert {r["id"]: r["human"] for r in records} == {row["id"]: row["scores"]["coherence"] for row in ROWS}
    assert {r["group"] for r in records} == {"d0", "d1"}
    assert result.rows == len(ROWS) and result.skipped == 0


def test_judge_stats_reads_a_dotted_human_field(tmp_path: Path) -> None:
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"id": r["id"], "score": 3, "gold": {"h": r["scores"]["relevance"]}})
                                 + "\n" for r in ROWS), encoding="utf-8")
    records, skipped = read_scores(str(judgments), JudgmentFields(human_field="gold.h"))
    assert not skipped and [r["human"] for r in records] == [float(r["scores"]["relevance"]) for r in ROWS]


@pytest.mark.parametrize(("method", "extra", "words"), [
    ("pairwise", ["--human-field", "scores.coherence"], ("--human-field", "--method pairwise", "geval")),
    ("geval", ["--swap"], ("--swap", "--method geval")),
    ("geval", ["--label-field", "gold"], ("--label-field",)),
    ("reference", ["--criterion", "Coherence (1-5)"], ("--criterion", "--method reference")),
    ("reviseval", ["--single", "--output1-field", "a"], ("--output1-field", "--method reviseval --single")),
    ("geval", ["--classic-metrics", "bleu"], ("--classic-metrics",)),
    ("pairwise", ["--target-agreement", "0.8"], ("--target-agreement", "--judge-cascade")),
    ("pairwise", ["--reference-field", "ref"], ("--reference-field", "--with-reference")),
])
def test_an_option_the_method_does_not_read_is_refused(tmp_path: Path, method: str, extra: list[str],
                                                       words: tuple[str, ...], capsys: pytest.CaptureFixture[str],
                                                       caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "out"
    code, lines, _ = run_cli(["judge", str(write_rows(tmp_path)), "--method", method, "--out", str(out),
                              "--simulate", *extra], capsys, caplog)
    assert_one_error(code, lines, *words)
    assert not out.exists()
