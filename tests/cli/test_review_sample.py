"""`examiner review` end to end: draw a random sample of a run's verdicts, fill in the sheet, import the
labels, and `examiner report` shows the accuracy calibrated by them, the figures examiner.stats.ppi gives
on the same labels; browsing overrides do not change them. Bad input is one line and exit 2.

The run is tests.helpers.sample_run's (alpha 10 correct / 2 incorrect, beta 6 / 4 judged units)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.reporting import calibration_section
from examiner.stats.ppi import agreement, calibrated_accuracy
from tests.helpers.sample_run import write_sample_run


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    return write_sample_run(tmp_path / "run", tmp_path / "corpus")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_review_sample_labels_then_report_calibrates(run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(calibration_section, "MIN_LABELS", 5)  # the sample run is small
    sheet = tmp_path / "sheet.jsonl"
    assert main(["review", str(run_dir), "--sample", "6", "--per-target", "--seed", "4", "--sheet", str(sheet),
                 "--who", "ana"]) == 0
    out = capsys.readouterr().out
    assert "drew draw-" in out and "12 of 22 judged units (per-target, seed 4, size 6, by ana" in out
    rows = _jsonl(sheet)
    assert len(rows) == 12 and all(r["verdict"] is None for r in rows) and "reason" not in rows[0]
    assert main(["review", str(run_dir), "--sample", "6", "--per-target", "--seed", "4"]) == 0  # same draw: kept
    capsys.readouterr()

    status = {(o["target"], o["unit_id"]): o["status"] for o in _jsonl(run_dir / "outcomes.jsonl")}
    flipped = 0
    for r in rows:  # the person agrees with the judge except on two of alpha's correct units
        r["verdict"] = status[(r["target"], r["unit_id"])]
        if r["target"] == "alpha" and r["verdict"] == "correct" and flipped < 2:
            r["verdict"], flipped = "incorrect", flipped + 1
    rows[-1]["verdict"] = None  # one left unlabelled: skipped
    sheet.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["review", str(run_dir), "--labels", str(sheet)]) == 0
    out = capsys.readouterr().out
    assert "imported 11 labels" in out and "alpha: 6 of 6 drawn units labelled" in out

    # a reviewer browsing overturns verdicts: not a random sample, never used by the calibration
    verdicts = _jsonl(run_dir / "verdicts.jsonl")
    with (run_dir / "overrides.jsonl").open("w", encoding="utf-8") as f:
        for v in verdicts[:6]:
            f.write(json.dumps({"question_id": v["question_id"], "unit_id": v["unit_id"], "old": "correct",
                                "new": "incorrect", "reason": "browsing", "who": "cy", "at": "2026-11-24T12:00:00Z"})
                    + "\n")

    assert main(["report", str(run_dir)]) == 0
    capsys.readouterr()
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    section = report["calibration"]
    assert section["draw"]["seed"] == 4 and section["draw"]["labelled"] == 11 and section["minimum"] == 5
    people = {(r["target"], r["unit_id"]): r["verdict"] for r in rows if r["verdict"]}
    for target in ("alpha", "beta"):
        units = sorted(u for (t, u), s in status.items() if t == target and s in ("correct", "incorrect"))
        judge = [status[(target, u)] for u in units]
        human = [people.get((target, u)) for u in units]
        expected = calibrated_accuracy([int(j == "correct") for j in judge],
                                       [None if h is None else int(h == "correct") for h in human])
        got = section["targets"][target]
        for key in ("estimate", "low", "high"):
            assert got["ppi"][key] == pytest.approx(getattr(expected.ppi, key), abs=1e-12)
            assert got["human_only"][key] == pytest.approx(getattr(expected.human_only, key), abs=1e-12)
        kappa = agreement([h for h in human if h], [j for j, h in zip(judge, human) if h]).kappa
        assert got["agreement"]["kappa"] == pytest.approx(kappa, abs=1e-12)
    assert section["targets"]["alpha"]["judge_bias"] > 0  # the person marked two of the judge's corrects wrong
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "### Calibrated by people" in md and "| alpha | 6 / 12 |" in md


def test_review_refuses_bad_input_in_one_line(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(run_dir)]) == 2
    assert "no sample drawn yet" in capsys.readouterr().err
    assert main(["review", str(run_dir), "--sample", "4"]) == 0
    assert main(["review", str(run_dir), "--sample", "5"]) == 2
    assert "already drawn" in capsys.readouterr().err
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"target": "alpha", "unit_id": "no-such-unit", "verdict": "correct"}\n', encoding="utf-8")
    assert main(["review", str(run_dir), "--labels", str(labels)]) == 2
    err = capsys.readouterr().err
    assert "not in the drawn sample" in err and len(err.strip().splitlines()) == 1
    labels.write_text("{not json\n", encoding="utf-8")
    assert main(["review", str(run_dir), "--labels", str(labels)]) == 2
    assert "not JSON" in capsys.readouterr().err
