"""`--unparseable own-class`: unparseable verdicts stay in as a class of their own that is never correct,
and macro precision, recall and F1 average over the gold classes only. That is scikit-learn's
`f1_score(gold, pred, labels=<gold classes>, average="macro")` with the unparseable rows as their own
label, the convention behind PandaLM's published macro-F1; the other conventions stay as they were."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from examiner.judging.judgment_files import JudgmentFields, judgments_report
from tests.helpers.cli_runs import assert_one_error, run_cli

UNPARSEABLE = -1


def table(seed: int, rows: int, gold_classes: tuple[int, ...], predicted: tuple[int, ...], share_unparseable: float,
          ) -> list[dict[str, object]]:
    """One judgment per row: a gold label, and a verdict that is often right, sometimes another class
    (one the gold never holds included) and sometimes unparseable (null)."""
    rng = random.Random(seed)
    out = []
    for i in range(rows):
        gold = rng.choice(gold_classes)
        roll = rng.random()
        verdict: int | None = None if roll < share_unparseable else (
            gold if roll < 0.6 else rng.choice(predicted))
        out.append({"id": f"r{i}", "order": "original", "verdict": verdict, "label": gold})
    return out


def write(folder: Path, rows: list[dict[str, object]]) -> Path:
    path = folder / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("seed", "gold_classes", "predicted", "share"), [
    (1, (0, 1, 2), (0, 1, 2), 0.1),
    (2, (1, 2), (0, 1, 2), 0.2),   # the judge predicts ties the gold never holds: no tie class in the average
    (3, (0, 1, 2), (1, 2), 0.05),  # the judge never predicts a tie: that class's F1 is 0 and counts
    (4, (1, 2), (1, 2), 0.4),
])
def test_own_class_equals_scikit_learn(tmp_path: Path, seed: int, gold_classes: tuple[int, ...],
                                       predicted: tuple[int, ...], share: float) -> None:
    rows = table(seed, 300, gold_classes, predicted, share)
    report = judgments_report(str(write(tmp_path, rows)), JudgmentFields(), unparseable="own-class")
    figures = report["pairwise"]["agreement"]
    y_true = [r["label"] for r in rows]
    y_pred = [UNPARSEABLE if r["verdict"] is None else r["verdict"] for r in rows]
    labels = sorted(set(y_true))
    assert figures["n"] == len(rows) and figures["n_unparseable"] == y_pred.count(UNPARSEABLE) > 0
    for name, reference in (("macro_f1", f1_score), ("macro_precision", precision_score),
                            ("macro_recall", recall_score)):
        expected = reference(y_true, y_pred, labels=labels, average="macro", zero_division=0)
        assert figures[name] == pytest.approx(expected, abs=1e-12), name
    assert figures["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-12)
    assert sorted(figures["classes"]) == labels


def test_the_three_conventions_differ_and_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """drop leaves the unparseable rows out, wrong counts each as a wrong label, own-class keeps them as a
    class of their own; each report says which one it used."""
    path = write(tmp_path, table(5, 200, (0, 1, 2), (0, 1, 2), 0.15))
    f1 = {}
    for convention in ("drop", "wrong", "own-class"):
        out = tmp_path / convention
        code, lines, _ = run_cli(["judge-stats", str(path), "--unparseable", convention, "--out", str(out)],
                                 capsys, caplog)
        assert code == 0, lines
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        assert report["pairwise"]["unparseable_convention"] == convention
        assert f"--unparseable {convention}" in (out / "report.md").read_text(encoding="utf-8")
        f1[convention] = report["pairwise"]["agreement"]["macro_f1"]
    assert len({round(v, 12) for v in f1.values()}) == 3, f1


def test_own_class_is_refused_for_single_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps({"id": f"s{i}", "score": i % 5 + 1, "human": i % 3}) + "\n" for i in range(6)),
                    encoding="utf-8")
    code, lines, _ = run_cli(["judge-stats", str(path), "--unparseable", "own-class"], capsys, caplog)
    assert_one_error(code, lines, "own-class", "single scores")
