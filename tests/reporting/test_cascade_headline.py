"""A judge cascade in the report's headline (report.md, report.html), and, when its cheap judge settled nothing,
one sentence saying why and why the cascade then cost more than the strong judge alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from examiner.cli.main import main
from examiner.reporting.cascade_section import why_nothing_settled
from examiner.reporting.layout import cascade_headline
from examiner.reporting.model.cascade import CascadeSection
from examiner.stats.cascade import min_testable

CHEAP = {"provider": "simulated", "model": "sim-cheap", "price_input_per_1m": 0.15, "price_output_per_1m": 0.6,
         "options": {"judge_noise": 0.15, "judge_difficulty": 3}}
STRONG = {"provider": "simulated", "model": "sim-strong", "price_input_per_1m": 2.5, "price_output_per_1m": 10.0}


def _section(**changes: Any) -> CascadeSection:
    base: dict[str, Any] = {
        "cheap": "cheap", "strong": "strong", "target_agreement": 0.9, "risk": 0.1, "calibration_share": 0.1,
        "samples": 5, "confidence_source": "logprobs", "threshold": None, "calibration_agreement": 0.8,
        "kept_agreement": None, "units": 40, "settled_cheap": 0, "settled_strong": 36, "calibration_units": 4,
        "cheap_share": 0.0, "kept_agreement_low": None, "kept_agreement_high": None,
        "spend": [{"tier": "cheap", "endpoint": "cheap", "calls": 10, "cost_usd": 0.01},
                  {"tier": "strong", "endpoint": "strong", "calls": 40, "cost_usd": 0.16}],
        "strong_only_usd": 0.16, "spend_ratio": 1.06}
    return CascadeSection.model_validate({**base, **changes})


def test_why_a_cascade_settled_nothing() -> None:
    floor = min_testable(0.9, 0.1)
    small = why_nothing_settled(_section())
    assert small is not None and "4 units" in small and f"at least {floor}" in small and "106.0% of strong-only" in small
    tested = why_nothing_settled(_section(calibration_units=floor + 10, spend_ratio=0.98))
    assert tested is not None and "no confidence threshold passed" in tested and "strong-only" not in tested
    assert why_nothing_settled(_section(settled_cheap=12, cheap_share=0.3)) is None
    assert "settled nothing" in (cascade_headline(_section()) or "")
    assert cascade_headline(None) is None


def test_the_headline_shows_the_cascade_and_says_why_it_settled_nothing(tmp_path: Path) -> None:
    config = tmp_path / "cascade.yaml"  # one small document: too few calibration units for 0.9 at risk 0.1
    config.write_text(yaml.safe_dump({"endpoints": {"cheap": CHEAP, "strong": STRONG},
                                      "roles": {"examiner": "simulated", "candidate": "simulated",
                                                "judge": {"cascade": ["cheap", "strong"]}}}))
    out = tmp_path / "run"
    assert main(["run", "corpora/examiner-handbook/01-exam.md", "--config", str(config), "--out", str(out),
                 "--quiet", "--max-rounds", "1"]) == 0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    headline = markdown.split("## Headline", 1)[1].split("## What went wrong", 1)[0]
    assert "Judge cascade: cheap settled 0 of" in headline and "settled nothing" in headline
    section = markdown.split("## Judge cascade", 1)[1]
    assert "Why the cheap judge settled nothing" in section
    html = (out / "report.html").read_text(encoding="utf-8")
    front = html.split("id=\"headline\"", 1)[1].split("id=\"went-wrong\"", 1)[0]
    assert "Judge cascade: cheap settled 0 of" in front
