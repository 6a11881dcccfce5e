"""`--units llm` against an endpoint that times out: a model failure, so the run stops `failed` (every
extraction call timed out) or `incomplete` with one line and a resume finishes it; never an internal
error (exit 70)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from examiner.core import rundir
from tests.helpers.cli_runs import run_cli
from tests.helpers.simulated_exam import PROFILE

CORPUS = "corpora/examiner-handbook"
STALL = {"faults": {"timeout": 1.0}, "timeout_sleep_s": 3.0}
"""Every request answered only after 3 s, well past the client's 0.3 s timeout."""


def write_config(folder: Path, options: dict[str, object], attempts: int = 2) -> Path:
    endpoint = {"provider": "simulated", "model": "sim", "timeout_s": 0.3, "max_attempts": attempts,
                "backoff_base_s": 0.01,
                "options": {"knowledge": PROFILE, **options}}
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"sim": endpoint},
                                      "roles": {r: "sim" for r in ("examiner", "candidate", "judge")},
                                      "exam": {"max_rounds": 1, "unit_mode": "llm"}}), encoding="utf-8")
    return config


def test_an_endpoint_that_times_out_fails_the_run_in_one_line_and_resume_finishes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    run_dir = tmp_path / "run"
    code, lines, _ = run_cli(["run", CORPUS, "--config", str(write_config(tmp_path, STALL)), "--out", str(run_dir),
                              "--quiet"], capsys, caplog)
    errors = [line for line in lines if line.startswith("examiner:")]
    assert code == 75 and len(errors) == 1, lines  # an outage (EX_TEMPFAIL), not bad input
    assert errors[0].startswith("examiner: error: every unit extraction call failed") and "(timeout, timeout)" in errors[0]
    assert not any("internal error" in line or "Traceback" in line for line in lines)
    info = json.loads((run_dir / rundir.RUN_INFO).read_text())
    assert info["status"] == "failed" and "unit extraction" in info["stop_reason"]

    # The endpoint recovers: the run's own configuration without the stall, then resume.
    saved = run_dir / rundir.CONFIG
    settings = yaml.safe_load(saved.read_text())
    settings["endpoints"]["sim"]["options"].pop("faults")
    saved.write_text(yaml.safe_dump(settings), encoding="utf-8")
    code, lines, _ = run_cli(["resume", str(run_dir), "--quiet"], capsys, caplog)
    assert code == 0, lines
    info = json.loads((run_dir / rundir.RUN_INFO).read_text())
    assert info["status"] == "completed" and info["units"] > 0


def test_some_extraction_calls_timing_out_stop_the_run_incomplete(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """Half the requests stall and none is retried: of the handbook's 2 extraction batches one is
    answered and one times out (the simulator's fault draw is seeded), so the run stops `incomplete`,
    exit 5, naming the resume."""
    run_dir = tmp_path / "run"
    config = write_config(tmp_path, {"faults": {"timeout": 0.5}, "timeout_sleep_s": 3.0}, attempts=1)
    code, lines, _ = run_cli(["run", CORPUS, "--config", str(config), "--out", str(run_dir), "--quiet"],
                             capsys, caplog)
    info = json.loads((run_dir / rundir.RUN_INFO).read_text())
    assert code == 5 and info["status"] == "incomplete", (code, info["status"], lines)
    assert info["stop_reason"].startswith("1 unit extraction call(s) of 2 failed for good")
    assert f"examiner: incomplete: {info['stop_reason']}" in lines
    assert any(line.startswith("examiner: to ask those calls again and finish: examiner resume") for line in lines)
    assert not any("internal error" in line for line in lines)
