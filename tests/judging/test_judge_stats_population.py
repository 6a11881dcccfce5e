"""judge-stats' calibrated shares cover every judged row: a row without a usable verdict is the judge's
class `unparseable`, not dropped, so a gold label drawn on it stays in the sample and the population the
calibration states is the one the report's top line counts (before, 974 of PandaLM's 999 rows were the
population while the report said 999). Single scores cannot carry an unscored row, so their population,
the scored rows, is stated with the number of judged rows outside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.stats.ppi import calibrated_accuracy
from tests.helpers.cli_runs import run_cli

ROWS = 120


def pairwise_rows() -> list[dict[str, object]]:
    """Rows r0..r119: every 8th has no usable verdict in either order, every 5th in the original order only
    (its swapped verdict stands); every 3rd carries a gold label (so gold labels fall on unparseable rows)."""
    out: list[dict[str, object]] = []
    for i in range(ROWS):
        gold = (1, 2, 0)[(i // 3) % 3]
        verdict: int | None = (1, 2, 1, 0)[i % 4]
        original = None if i % 8 == 0 or i % 5 == 0 else verdict
        swapped = None if i % 8 == 0 else verdict
        for order, v in (("original", original), ("swapped", swapped)):
            row: dict[str, object] = {"id": f"r{i}", "order": order, "verdict": v}
            if i % 3 == 0:
                row["label"] = gold
            out.append(row)
    return out


def test_pairwise_population_is_every_judged_row(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 caplog: pytest.LogCaptureFixture) -> None:
    rows = pairwise_rows()
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, lines, out = run_cli(["judge-stats", str(path), "--out", str(tmp_path / "out")], capsys, caplog)
    assert code == 0, lines
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    cal = report["pairwise"]["calibration"]
    unread = [i for i in range(ROWS) if i % 8 == 0]
    assert report["rows_judged"] == cal["rows"] == ROWS
    assert cal["unparseable"] == len(unread) and "unparseable" in cal["estimand"]
    assert cal["labelled"] == len(range(0, ROWS, 3))  # gold labels on unparseable rows are kept
    assert "unparseable" not in cal["labels"]  # no gold label is the judge's missing verdict
    # label 1's share: the judge's 0/1 on every row (0 on an unparseable one), the gold's on the labelled rows
    verdicts = {}
    for r in rows:
        if r["verdict"] is not None and r["id"] not in verdicts:
            verdicts[r["id"]] = r["verdict"]
    gold = {r["id"]: r["label"] for r in rows if "label" in r}
    ids = sorted({str(r["id"]) for r in rows})
    expected = calibrated_accuracy([int(verdicts.get(i) == 1) for i in ids],
                                   [int(gold[i] == 1) if i in gold else None for i in ids], level=0.95)
    assert cal["labels"]["1"]["ppi"]["estimate"] == pytest.approx(expected.ppi.estimate, abs=1e-12)
    assert cal["labels"]["1"]["population"] == ROWS
    assert f"of {ROWS} judged rows, {len(unread)} of them without a usable verdict" in out + "\n".join(lines)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"of {ROWS} judged rows carry a gold label" in md and f"the {len(unread)} rows without a usable" in md


def test_single_scores_state_the_rows_outside_the_population(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            caplog: pytest.LogCaptureFixture) -> None:
    rows = [{"id": f"s{i}", "score": None if i % 6 == 0 else 1 + i % 5, **({"human": i % 4} if i % 2 else {})}
            for i in range(60)]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, lines, out = run_cli(["judge-stats", str(path), "--out", str(tmp_path / "out")], capsys, caplog)
    assert code == 0, lines
    cal = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["single"]["calibration"]
    assert cal["rows"] == 50 and cal["unscored"] == 10 and "10 judged rows without a score" in cal["estimand"]
    assert "of 50 scored rows" in out + "\n".join(lines) and "10 judged rows without a score" in out + "\n".join(lines)
