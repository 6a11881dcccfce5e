"""report.html shows the first incorrect units of each target open and folds the rest under one <details>, so
the report is not mostly that list; every unit is still in the page, and report.md keeps them all."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from examiner.cli.main import main
from examiner.reporting.html import INCORRECT_OPEN


def test_incorrect_units_beyond_the_first_few_are_folded(tmp_path: Path) -> None:
    config = tmp_path / "wrong.yaml"  # a target that gets most units wrong: many incorrect units to show
    config.write_text(yaml.safe_dump({
        "endpoints": {"sim": {"provider": "simulated", "model": "sim",
                              "options": {"knowledge": {"known": 0.2, "wrong": 0.7, "unknown": 0.1}}}},
        "roles": {"examiner": "sim", "candidate": "sim", "judge": "sim"}}))
    out = tmp_path / "run"
    assert main(["run", "corpora/examiner-handbook", "--config", str(config), "--out", str(out), "--quiet",
                 "--max-rounds", "1"]) == 0
    shown = json.loads((out / "report.json").read_text(encoding="utf-8"))["targets"]["sim"]["incorrect"]
    assert len(shown) > INCORRECT_OPEN
    html = (out / "report.html").read_text(encoding="utf-8")
    section = html.split(">Incorrect units<", 1)[1].split("<h2", 1)[0]
    open_part, folded = section.split("<details class=\"more-wrong\">", 1)
    assert open_part.count("class=\"wrong\"") == INCORRECT_OPEN
    assert folded.count("class=\"wrong\"") == len(shown) - INCORRECT_OPEN
    assert f"{len(shown) - INCORRECT_OPEN} more incorrect units of sim</summary>" in folded
    assert folded.rstrip().endswith("</details>")
