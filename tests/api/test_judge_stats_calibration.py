"""`examiner judge-stats` on a dataset with gold labels on only a few rows: each label's share over every
row calibrated by them (PPI++), the same figures examiner.stats.ppi gives on the same labels; single
scores with a few human scores: the mean human score calibrated the same way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from examiner.api.judging import JudgeStatsOptions, judge_stats
from examiner.cli.main import main
from examiner.reporting.calibration_section import MIN_LABELS
from examiner.stats.ppi import agreement, calibrated_accuracy, ppi_mean


def _pairwise(tmp_path: Path, rows: int = 300, labelled: int = 60) -> tuple[Path, Path, dict[str, int], dict[str, int]]:
    """Judgments of `rows` pairs (a judge that prefers output 1 too often) and gold labels on a random
    `labelled` of them, in a labels file."""
    rng = np.random.default_rng(11)
    truth = rng.choice([1, 2, 0], size=rows, p=[0.45, 0.45, 0.10])
    verdicts = np.where(rng.random(rows) < 0.25, 1, truth)  # a quarter of the verdicts say 1 whatever
    judged = {f"r{i}": int(v) for i, v in enumerate(verdicts)}
    chosen = sorted(rng.choice(rows, size=labelled, replace=False))
    gold = {f"r{i}": int(truth[i]) for i in chosen}
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"id": k, "order": "original", "verdict": v}) + "\n"
                                 for k, v in judged.items()), encoding="utf-8")
    labels = tmp_path / "gold.jsonl"
    labels.write_text("".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in gold.items()), encoding="utf-8")
    return judgments, labels, judged, gold


def test_a_few_gold_labels_calibrate_each_labels_share(tmp_path: Path) -> None:
    judgments, labels, judged, gold = _pairwise(tmp_path)
    report = judge_stats(JudgeStatsOptions(judgments=str(judgments), labels=str(labels))).report.model_dump()
    section = report["pairwise"]["calibration"]
    assert (section["rows"], section["labelled"], section["minimum"]) == (300, 60, MIN_LABELS)
    ids = sorted(judged)
    for name in ("1", "2", "0"):
        expected = calibrated_accuracy([int(str(judged[i]) == name) for i in ids],
                                       [int(str(gold[i]) == name) if i in gold else None for i in ids])
        got = section["labels"][name]
        for key in ("estimate", "low", "high", "standard_error"):
            assert got["ppi"][key] == pytest.approx(getattr(expected.ppi, key), abs=1e-12)
            assert got["human_only"][key] == pytest.approx(getattr(expected.human_only, key), abs=1e-12)
        assert got["judge_bias"] == pytest.approx(expected.judge_bias, abs=1e-12)
    kappa = agreement([str(gold[i]) for i in ids if i in gold], [str(judged[i]) for i in ids if i in gold])
    assert section["agreement"]["kappa"] == pytest.approx(kappa.kappa, abs=1e-12)
    assert section["labels"]["1"]["judge_bias"] > 0  # the judge says 1 too often; the gold labels correct it


def test_gold_on_every_row_has_nothing_to_calibrate(tmp_path: Path) -> None:
    judgments, _, judged, _ = _pairwise(tmp_path, rows=40, labelled=40)
    every = tmp_path / "all.jsonl"
    every.write_text("".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in judged.items()), encoding="utf-8")
    report = judge_stats(JudgeStatsOptions(judgments=str(judgments), labels=str(every))).report.model_dump()
    assert report["pairwise"].get("calibration") is None and report["pairwise"]["agreement"]["n"] == 40


def test_single_scores_with_a_few_human_scores(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    human = rng.integers(1, 6, size=200).astype(float)
    score = np.clip(human + rng.normal(0.8, 0.7, size=200), 1, 10)  # a judge that grades a little high
    rows = [{"id": f"s{i}", "score": float(score[i]), **({"human": float(human[i])} if i % 5 == 0 else {})}
            for i in range(200)]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = judge_stats(JudgeStatsOptions(judgments=str(path))).report.model_dump()
    section = report["single"]["calibration"]
    labelled = [r for r in rows if "human" in r]
    expected, lam = ppi_mean([r["human"] for r in labelled], [r["score"] for r in labelled],
                             [r["score"] for r in rows if "human" not in r])
    assert (section["rows"], section["labelled"]) == (200, 40)
    assert section["ppi"]["estimate"] == pytest.approx(expected.estimate, abs=1e-12) and section["lam"] == lam
    assert section["human_only"]["estimate"] == pytest.approx(np.mean([r["human"] for r in labelled]), abs=1e-12)


def test_cli_judge_stats_prints_and_writes_the_calibrated_section(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    judgments, labels, _, _ = _pairwise(tmp_path)
    out = tmp_path / "out"
    assert main(["judge-stats", str(judgments), "--labels", str(labels), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "calibrated by 60 gold labels of 300 judged rows" in printed and "  label 1: share " in printed
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Calibrated by the gold labels" in md and "60 of 300 judged rows carry a gold label" in md
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["pairwise"]["calibration"]["labelled"] == 60
