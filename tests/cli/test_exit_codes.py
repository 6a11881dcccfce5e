"""Exit codes a job system can act on: an outage (every model call of a stage failing, run.json `failed`)
exits 75 (EX_TEMPFAIL, worth retrying with `examiner resume`), never 2, the code of input the tool cannot use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from examiner.core import rundir
from examiner.core.errors import EXIT_OUTAGE, EXIT_USER_ERROR
from tests.helpers.cli_runs import run_cli
from tests.helpers.simulated_exam import PROFILE

CORPUS = "corpora/examiner-handbook"


def _config(folder: Path, faults: dict[str, float]) -> Path:
    endpoint = {"provider": "simulated", "model": "sim", "max_attempts": 1, "backoff_base_s": 0.01,
                "options": {"knowledge": PROFILE, "faults": faults}}
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump({"endpoints": {"sim": endpoint},
                                      "roles": {r: "sim" for r in ("examiner", "candidate", "judge")},
                                      "exam": {"max_rounds": 1}}), encoding="utf-8")
    return config


def test_an_endpoint_that_is_down_exits_with_the_outage_code_not_the_bad_input_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    run_dir = tmp_path / "run"
    config = _config(tmp_path, {"server_error": 1.0})
    code, lines, _ = run_cli(["run", CORPUS, "--config", str(config), "--out", str(run_dir), "--quiet"], capsys, caplog)
    errors = [line for line in lines if line.startswith("examiner:")]
    assert code == EXIT_OUTAGE == 75, lines
    assert len(errors) == 1 and "call failed" in errors[0] and f"examiner resume {run_dir}" in errors[0], lines
    assert json.loads((run_dir / rundir.RUN_INFO).read_text())["status"] == "failed"
    assert not any("Traceback" in line or "internal error" in line for line in lines)

    missing = tmp_path / "no-such-corpus"
    code, lines, _ = run_cli(["run", str(missing), "--config", str(config), "--out", str(tmp_path / "other"),
                              "--quiet"], capsys, caplog)
    assert code == EXIT_USER_ERROR == 2, lines


def test_an_estimate_whose_pilot_met_an_outage_exits_with_the_outage_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """The pilot's every call failing used to print an estimate of $0 and exit 0."""
    config = _config(tmp_path, {"server_error": 1.0})
    code, lines, _ = run_cli(["estimate", CORPUS, "--config", str(config), "--out", str(tmp_path / "pilot"), "--quiet"],
                             capsys, caplog)
    errors = [line for line in lines if line.startswith("examiner:")]
    assert code == EXIT_OUTAGE, lines
    assert len(errors) == 1 and errors[0].startswith("examiner: error: the pilot failed") and "call failed" in errors[0]
