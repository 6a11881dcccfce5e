"""examples/api_tour.py runs as shipped: an exam of two targets on the simulated backend, their
comparison, and the run's rows, each figure it prints agreeing with the run folder."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from examiner.api import read_exam

ROOT = Path(__file__).resolve().parents[2]


def load_tour() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_tour", ROOT / "examples" / "api_tour.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_api_tour_runs_and_what_it_prints_matches_the_run(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    figures = load_tour().main(tmp_path / "tour")
    printed = capsys.readouterr().out
    run_dir = tmp_path / "tour" / "exam"
    exam = read_exam(run_dir)
    assert figures["status"] == exam.status == "completed"
    assert exam.report is not None and exam.report.run.run_id == exam.run_id  # the typed report model
    assert {t: s.counts.correct for t, s in exam.report.targets.items()} == {t: r.correct for t, r in exam.targets.items()}
    assert figures["targets"] == list(exam.targets) and len(figures["targets"]) == 2
    first, second = (exam.targets[t].accuracy.value for t in figures["targets"])
    assert figures["gap"] == pytest.approx(first - second)
    assert f"accuracy gap {figures['targets'][0]} - {figures['targets'][1]}: {first - second:+.3f}" in printed
    verdict_ids = {json.loads(line)["id"] for line in (run_dir / "verdicts.jsonl").read_text().splitlines()}
    assert figures["verdicts"] == len(verdict_ids) == sum(figures["tally"].values())
    assert {target for target, _ in figures["tally"]} == set(figures["targets"])
    ledger = [json.loads(line) for line in (run_dir / "ledger.jsonl").read_text().splitlines()]
    assert figures["calls"] == sum(1 for r in ledger if r.get("outcome", "ok") in ("ok", "reconciled")) > 0
    assert f"{figures['calls']} calls" in printed and f"{figures['verdicts']} verdicts" in printed
    assert f"DataFrame {figures['verdicts']} x 10" in printed
