"""Run folders written before the verdict had one name: verdicts.jsonl said `type` and overrides.jsonl
`old`/`new`. Such a folder still reads (labels, overrides, report), and a stopped one resumes to the same
outcomes as an uninterrupted run, the records it appends spelling the label `verdict`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from examiner.api import ResumeOptions, resume_exam
from examiner.core.rundir import OVERRIDES, VERDICTS
from examiner.exam.runner import ExamRequest, start_exam
from examiner.reporting import load_run
from examiner.reporting.with_overrides import overrides_summary
from tests.helpers.simulated_exam import outcomes_of, sim_settings


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _as_written_before(run_dir: Path) -> int:
    """Rewrite verdicts.jsonl with the old key (`type`, members too); the number of lines rewritten."""
    rows = _lines(run_dir / VERDICTS)
    for row in rows:
        for record in (row, *row.get("members", {}).values()):
            record["type"] = record.pop("verdict")
    (run_dir / VERDICTS).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


def test_a_stopped_run_in_the_old_names_resumes_to_the_same_outcomes(small_corpus: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    asyncio.run(start_exam(sim_settings(), ExamRequest([str(small_corpus)], run_id="fixed"), reference, quiet=True,
                           report=False))
    stopped = tmp_path / "stopped"
    info = asyncio.run(start_exam(sim_settings().merged({"budget_usd": 0.05}),
                                  ExamRequest([str(small_corpus)], run_id="fixed"), stopped, quiet=True, report=False))
    assert info.status == "budget_exhausted"
    old = _as_written_before(stopped)
    assert old and all("type" in r and "verdict" not in r for r in _lines(stopped / VERDICTS))

    result = resume_exam(ResumeOptions(run_dir=str(stopped), budget_usd=100.0))
    assert result.status == "completed"
    rows = _lines(stopped / VERDICTS)
    assert len(rows) > old and all("verdict" in r and "type" not in r for r in rows[old:])
    expected = {k: o.status for k, o in outcomes_of(reference).items()}
    assert {k: o.status for k, o in outcomes_of(stopped).items()} == expected


def test_old_overrides_still_count(small_corpus: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    asyncio.run(start_exam(sim_settings(max_rounds=1), ExamRequest([str(small_corpus)]), run_dir, quiet=True,
                           report=False))
    _as_written_before(run_dir)
    run = load_run(run_dir)
    verdict = next(v for v in sorted(run.verdicts.values(), key=lambda v: v.id) if v.verdict == "correct")
    row = {"question_id": verdict.question_id, "unit_id": verdict.unit_id, "old": "correct", "new": "incorrect",
           "reason": "checked", "who": "ana", "at": "2026-01-01T00:00:00Z"}
    (run_dir / OVERRIDES).write_text(json.dumps(row) + "\n", encoding="utf-8")
    run = load_run(run_dir)
    [override] = run.overrides.values()
    assert (override.verdict_before, override.verdict) == ("correct", "incorrect")
    summary = overrides_summary(run)
    assert summary is not None and summary["overrides"] == summary["changed"] == 1
