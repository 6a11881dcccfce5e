"""`examiner distil` says which rows it could not use instead of dropping them silently: a field of the
wrong type, a label it cannot read, a teacher's judgment whose grades are not numbers. Each is one
`examiner: skipped ...` line on stderr naming the file and row, and distil.json counts them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli_runs import run_cli

GOOD = [{"id": f"ok{i}", "instruction": f"Say {i}", "output_1": "yes", "output_2": "no", "label": 1 + i % 2}
        for i in range(4)]
BAD = [{"id": "b1", "instruction": 5, "output_1": "a", "output_2": "b", "label": 1},
       {"id": "b2", "instruction": "x", "output_1": ["a"], "output_2": "b", "label": 1},
       {"id": "b3", "instruction": "x", "output_1": "a", "output_2": {"t": 1}, "label": 1},
       {"id": "b4", "instruction": "x", "output_1": "a", "output_2": "b", "label": 7},
       {"id": "b5", "instruction": None, "output_1": "a", "output_2": "b", "label": 1},
       {"id": "b6", "instruction": "x", "output_1": "a", "output_2": "b", "label": True},
       {"id": "b7", "instruction": "x", "output_1": "a", "output_2": "b"}]


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_badly_typed_rows_are_named_and_counted(tmp_path: Path, capsys, caplog) -> None:
    data = _jsonl(tmp_path / "rows.jsonl", GOOD + BAD)
    out = tmp_path / "out"
    code, lines, _ = run_cli(["distil", "--data", str(data), "--out", str(out)], capsys, caplog)
    assert code == 0, lines
    skipped = [line for line in lines if line.startswith("examiner: skipped ")]
    assert len(skipped) == len(BAD), lines
    for line, number in zip(skipped, range(len(GOOD) + 1, len(GOOD) + len(BAD) + 1)):
        assert f"rows.jsonl: row {number}:" in line, line
    summary = json.loads((out / "distil.json").read_text(encoding="utf-8"))
    assert summary["skipped"]["rows"] == len(BAD) and len(summary["skipped"]["first"]) == len(BAD)


def test_judgments_with_wrong_types_are_skipped_not_a_crash(tmp_path: Path, capsys, caplog) -> None:
    data = _jsonl(tmp_path / "rows.jsonl", GOOD)
    judged = [{"id": "ok0", "order": "original", "score_1": 8, "score_2": 3, "verdict": "output_1", "reason": "r"},
              {"id": "ok1", "order": "original", "score_1": "high", "score_2": 3, "verdict": "output_1"},
              {"id": "ok2", "order": "original", "score_1": 2, "score_2": 9, "verdict": ["output_2"]},
              ["not", "an", "object"]]
    judgments = _jsonl(tmp_path / "judgments.jsonl", judged)
    code, lines, _ = run_cli(["distil", "--data", str(data), "--judgments", str(judgments), "--out",
                              str(tmp_path / "out")], capsys, caplog)
    assert code == 0, lines
    skipped = [line for line in lines if line.startswith("examiner: skipped ")]
    assert [line.split("judgments.jsonl line ")[1][:1] for line in skipped] == ["2", "3", "4"], lines
    assert "score_1 is not a number" in skipped[0] and "verdict is not text" in skipped[1]
    assert not any("internal error" in line for line in lines)
