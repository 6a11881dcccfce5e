"""`--simulate` bills the twins of unpriced endpoints at illustrative prices (so a cost demo is not $0.0000),
says so wherever the run's dollars are printed, and leaves priced endpoints and estimates as they were."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core.rundir import CONFIG
from examiner.core.sim_prices import (ILLUSTRATIVE_INPUT_PER_1M, ILLUSTRATIVE_OUTPUT_PER_1M, illustrative_endpoints,
                                      illustrative_note, with_illustrative_prices)


def _settings() -> Settings:
    priced = EndpointSpec(base_url="http://x/v1", model="gpt", price_input_per_1m=2.0, price_output_per_1m=8.0)
    free = EndpointSpec(base_url="http://y/v1", model="mine")
    return Settings(endpoints={"gpt": priced, "mine": free}, roles={"examiner": "gpt", "candidate": "mine",
                                                                   "judge": "gpt"})


def test_only_unpriced_endpoints_get_illustrative_prices_and_only_when_asked() -> None:
    twins = with_illustrative_prices(_settings().simulated()).endpoints
    assert (twins["sim-mine"].price_input_per_1m, twins["sim-mine"].price_output_per_1m) == (
        ILLUSTRATIVE_INPUT_PER_1M, ILLUSTRATIVE_OUTPUT_PER_1M) != (0.0, 0.0)
    assert (twins["sim-gpt"].price_input_per_1m, twins["sim-gpt"].price_output_per_1m) == (2.0, 8.0)
    assert illustrative_endpoints(with_illustrative_prices(_settings().simulated()).model_dump()) == ["sim-local",
                                                                                                    "sim-mine"]
    plain = _settings().simulated()  # what an estimate prices with: the real endpoint's (no) prices
    assert plain.endpoints["sim-mine"].price_input_per_1m == 0.0 and illustrative_endpoints(plain.model_dump()) == []


def test_the_note_comes_from_the_run_folders_settings(tmp_path: Path) -> None:
    (tmp_path / CONFIG).write_text(yaml.safe_dump(with_illustrative_prices(_settings().simulated()).model_dump()))
    note = illustrative_note(tmp_path)
    assert note is not None and "illustrative" in note and "sim-mine" in note and "sim-gpt" not in note
    (tmp_path / CONFIG).write_text(yaml.safe_dump(_settings().model_dump()))
    assert illustrative_note(tmp_path) is None
    assert illustrative_note(tmp_path / "moved-away") is None


def test_a_simulated_run_costs_something_and_says_the_prices_are_illustrative(corpus: Path, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["run", str(corpus), "--simulate", "--max-rounds", "1", "--out", str(run)]) == 0
    out = capsys.readouterr().out
    cost = next(line for line in out.splitlines() if line.startswith("cost $"))
    assert cost.split()[1] != "$0.0000:", cost
    assert "simulated prices (illustrative" in out
    report = (run / "report.md").read_text(encoding="utf-8")
    line = next(line for line in report.splitlines() if line.startswith("Cost: $"))
    assert "simulated prices (illustrative" in line and not line.startswith("Cost: $0.0000")
    assert "simulated prices (illustrative" in (run / "report.html").read_text(encoding="utf-8")
    assert main(["cost", str(run)]) == 0
    assert "dollars: simulated prices (illustrative" in capsys.readouterr().out
