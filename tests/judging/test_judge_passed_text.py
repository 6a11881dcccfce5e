"""`examiner judge` counts the responses its judge read cut to `max_passed_chars` (issue 37, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

from examiner.cli.main import main
from examiner.core.passed_text import DEFAULT_MAX_PASSED_CHARS


def test_a_response_longer_than_the_cap_is_counted_in_the_report(tmp_path: Path) -> None:
    long = "This response goes on and on. " * (DEFAULT_MAX_PASSED_CHARS // 10)  # 36,000 characters
    rows = [{"id": f"q{i}", "question": f"Explain topic {i}.", "a": long if i == 0 else f"Topic {i} is this.",
             "b": f"Weather {i}.", "gold": 1} for i in range(3)]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["judge", str(data), "--method", "pairwise", "--out", str(out), "--instruction-field", "question",
                 "--output1-field", "a", "--output2-field", "b", "--label-field", "gold", "--simulate"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["passed_cut"] == 1
    assert "- passed cut: 1" in (out / "report.md").read_text(encoding="utf-8")
