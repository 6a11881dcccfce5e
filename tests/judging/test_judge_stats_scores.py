"""`examiner judge-stats` on single-score judgments: its own G-Eval and reference-judge output, an external
scorer's file, human scores from --labels, and the two conventions for unparseable scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.stats import correlation as stats
from examiner.cli.main import main


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _summaries(tmp_path: Path) -> Path:
    rows = [{"id": f"s{i}", "instruction": "Summarise.", "output": f"Summary {i} " + "(u1:known) " * (i % 3),
             "reference": "A summary.", "human_score": 1 + i % 5, "doc": f"d{i % 3}", "sys": f"m{i % 4}"}
            for i in range(12)]
    return _write(tmp_path / "summaries.jsonl", rows)


@pytest.mark.parametrize("method", ["geval", "reference"])
def test_judge_stats_reads_examiner_judge_single_scores(method: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "j"
    assert main(["judge", str(_summaries(tmp_path)), "--method", method, "--group-field", "doc",
                 "--system-field", "sys", "--out", str(out), "--simulate"]) == 0
    judged = json.loads((out / "report.json").read_text())["single"]["correlation_with_human"]["judge"]
    capsys.readouterr()
    assert main(["judge-stats", str(out / "judgments.jsonl"), "--out", str(tmp_path / "stats")]) == 0
    printed = capsys.readouterr().out
    assert "correlation with human scores" in printed and "left out of the figures (--unparseable drop)" in printed
    assert any(line.split()[:2] == ["│", "judge"] and "summary" in line for line in printed.splitlines())
    single = json.loads((tmp_path / "stats" / "report.json").read_text())["single"]
    assert single["n_judgments"] == 12 and single["unparseable_convention"] == "drop"
    corr = single["correlation_with_human"]["judge"]
    assert set(corr) == {"sample", "summary", "system"}
    assert corr["system"]["n"] == 4
    # the same figures `examiner judge` reported for its own run
    for level in ("sample", "summary", "system"):
        for name in ("pearson", "spearman", "kendall"):
            assert corr[level][name] == pytest.approx(judged[level][name], nan_ok=True)


ROWS = [
    {"id": "a", "score": 4.0, "human": 5, "group": "d1", "system": "x"},
    {"id": "b", "score": 2.0, "human": 2, "group": "d1", "system": "y"},
    {"id": "c", "score": None, "human": 1, "group": "d1", "system": "z"},
    {"id": "d", "score": 3.5, "human": 4, "group": "d2", "system": "x"},
    {"id": "e", "score": 3.0, "human": 3, "group": "d2", "system": "y"},
    {"id": "f", "score": 1.5, "human": 2, "group": "d2", "system": "z"},
]


def test_unparseable_scores_dropped_or_counted_as_lowest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "scores.jsonl", ROWS)
    assert main(["judge-stats", str(path), "--out", str(tmp_path / "drop")]) == 0
    dropped = json.loads((tmp_path / "drop" / "report.json").read_text())["single"]
    kept = [r for r in ROWS if r["score"] is not None]
    assert dropped["n_unparseable"] == 1
    assert dropped["correlation_with_human"]["judge"]["sample"]["pearson"] == pytest.approx(
        stats.pearson([r["score"] for r in kept], [r["human"] for r in kept]))
    capsys.readouterr()
    assert main(["judge-stats", str(path), "--unparseable", "wrong", "--score-range", "1,5",
                 "--out", str(tmp_path / "wrong")]) == 0
    assert "counted as the lowest score (1.000) (--unparseable wrong)" in capsys.readouterr().out
    wrong = json.loads((tmp_path / "wrong" / "report.json").read_text())["single"]
    assert wrong["unparseable_convention"] == "wrong" and wrong["lowest_score"] == 1.0
    scores = [r["score"] if r["score"] is not None else 1.0 for r in ROWS]
    human = [r["human"] for r in ROWS]
    corr = wrong["correlation_with_human"]["judge"]
    assert corr["sample"]["n"] == 6
    assert corr["sample"]["kendall"] == pytest.approx(stats.kendall(scores, human))
    assert corr["summary"]["pearson"] == pytest.approx(
        stats.summary_level(scores, human, [r["group"] for r in ROWS]).pearson)
    assert corr["system"]["spearman"] == pytest.approx(
        stats.system_level(scores, human, [r["system"] for r in ROWS]).spearman)


def test_external_scores_with_field_flags_and_human_labels(tmp_path: Path) -> None:
    rows = [{"item": r["id"], "rating": r["score"], "doc": r["group"], "model": r["system"]} for r in ROWS]
    rows.append({"item": "g", "rating": 40})      # outside --score-range
    rows.append({"rating": 3})                    # no id
    path = _write(tmp_path / "ext.jsonl", rows)
    labels = _write(tmp_path / "gold.jsonl", [{"item": r["id"], "expert": r["human"]} for r in ROWS])
    assert main(["judge-stats", str(path), "--labels", str(labels), "--id-field", "item", "--score-field", "rating",
                 "--human-field", "expert", "--group-field", "doc", "--system-field", "model",
                 "--score-range", "1,5", "--out", str(tmp_path / "o")]) == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    messages = " ".join(s["message"] for s in report["skipped"])
    assert "field 'rating' = 40 is outside 1-5" in messages and "missing field 'item'" in messages
    assert report["single"]["correlation_with_human"]["judge"]["sample"]["n"] == 5


def test_pairwise_unparseable_counted_as_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": "a", "verdict": 1, "label": 1}, {"id": "b", "verdict": 2, "label": 2},
            {"id": "c", "verdict": None, "label": 1}, {"id": "d", "verdict": 1, "label": 2}]
    path = _write(tmp_path / "p.jsonl", rows)
    assert main(["judge-stats", str(path), "--out", str(tmp_path / "drop")]) == 0
    drop = json.loads((tmp_path / "drop" / "report.json").read_text())["pairwise"]
    assert drop["agreement"]["accuracy"] == pytest.approx(2 / 3) and drop["unparseable_convention"] == "drop"
    capsys.readouterr()
    assert main(["judge-stats", str(path), "--unparseable", "wrong", "--out", str(tmp_path / "wrong")]) == 0
    assert "counted as a wrong label" in capsys.readouterr().out
    wrong = json.loads((tmp_path / "wrong" / "report.json").read_text())["pairwise"]
    assert wrong["agreement"]["accuracy"] == pytest.approx(2 / 4) and wrong["agreement"]["n"] == 4
