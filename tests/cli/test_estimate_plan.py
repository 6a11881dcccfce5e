"""`examiner estimate --detect D --half-width W` adds the pilot's sample-size plans to what it prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from examiner.cli.main import main
from tests.helpers.cli_runs import assert_one_error, run_cli
from tests.helpers.paired_runs import CORPUS, write_paired_config


def test_estimate_detect_prints_a_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_paired_config(tmp_path)
    args = ["estimate", CORPUS, "--config", str(config), "--target", "strong", "--target", "weak", "--quiet",
            "--detect", "0.03", "--half-width", "0.05"]
    assert main([*args, "--out", str(tmp_path / "pilot")]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("plan for the accuracy difference weak - strong"))
    assert "ICC within documents" in lines[head] and "within clusters" in lines[head]
    detect = re.match(r"to detect 0\.030 with 80% power .*: ([\d,]+) units in ([\d,]+) documents .*about \$([\d,.]+)",
                      lines[head + 1])
    assert detect, lines[head + 1]
    assert "more than the corpus's 49 units" in lines[head + 2]
    width = next(line for line in lines[head:] if line.startswith("for a 95% interval of half-width 0.050"))
    assert "units in" in width
    assert main([*args, "--out", str(tmp_path / "again"), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["targets"] == ["strong", "weak"] and plan["design"]["quantity"] == "paired difference"
    first = plan["plans"][0]
    assert (first["goal"], first["detect"], first["power"]) == ("detect", 0.03, 0.8)
    assert first["units"] == int(detect.group(1).replace(",", ""))
    assert plan["plans"][1]["goal"] == "half_width"


@pytest.mark.parametrize(("extra", "words"), [
    (["--detect", "0"], ("--detect", "between 0 and 1")),
    (["--half-width", "2"], ("--half-width",)),
    (["--detect", "0.03", "--replay-simulated"], ("--replay-simulated",)),
])
def test_bad_goals_are_refused_before_the_pilot(tmp_path: Path, extra: list[str], words: tuple[str, ...],
                                                 capsys: pytest.CaptureFixture[str],
                                                 caplog: pytest.LogCaptureFixture) -> None:
    config = write_paired_config(tmp_path)
    pilot = tmp_path / "pilot"
    code, lines, _ = run_cli(["estimate", CORPUS, "--config", str(config), "--out", str(pilot), *extra],
                             capsys, caplog)
    assert_one_error(code, lines, *words)
    assert not pilot.exists()
