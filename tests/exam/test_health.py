"""Exam health: a degenerate simulated examiner and judge fail it (naming the template questions and the
placeholder reasons), an ordinary simulated run passes it, and --strict turns a failure into exit 4
after the reports are written."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import pytest
import yaml

from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core import rundir
from examiner.exam.health import COPIED_UNITS, REPEATED_QUESTIONS, SELF_AGREEMENT, Threshold, is_placeholder, normalise
from examiner.exam.runner import ExamRequest, start_exam
from examiner.reporting.health_section import UNTRUSTWORTHY
from examiner.simulator.degenerate import PLACEHOLDER_REASON, TEMPLATE_QUESTION
from tests.helpers.simulated_exam import PROFILE, ROLES, sim_settings


def degenerate_settings(max_rounds: int = 3) -> Settings:
    spec = EndpointSpec(provider="simulated", model="sim", price_input_per_1m=2.5, price_output_per_1m=10.0,
                        max_concurrency=16, options={"knowledge": PROFILE, "degenerate": True})
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": max_rounds})


def health_of(run_dir: Path) -> dict:
    return json.loads((run_dir / rundir.REPORT_JSON).read_text(encoding="utf-8"))["health"]


def check(health: dict, name: str) -> dict:
    return next(c for c in health["checks"] if c["name"] == name)


@pytest.fixture(scope="module")
def degenerate_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole handbook corpus: enough answers with two or more units for the verdict-pattern check."""
    import asyncio

    run_dir = tmp_path_factory.mktemp("degenerate") / "run"
    asyncio.run(start_exam(degenerate_settings(), ExamRequest(["corpora/examiner-handbook"]), run_dir, quiet=True))
    return run_dir


def test_degenerate_run_fails_naming_template_questions_and_placeholder_reasons(degenerate_run: Path) -> None:
    health = health_of(degenerate_run)
    assert health["status"] == "fail" and health["trustworthy"] is False
    repeated = check(health, "repeated_questions")
    assert repeated["status"] == "fail"
    assert any(TEMPLATE_QUESTION in e["text"] for e in repeated["examples"])
    reasons = check(health, "placeholder_reasons")
    assert reasons["status"] == "fail" and reasons["figure"] == 1.0
    assert all(e["text"] == repr(PLACEHOLDER_REASON) for e in reasons["examples"]) and reasons["examples"]
    assert check(health, "same_verdict_pattern")["status"] in ("warn", "fail")
    assert check(health, "copied_units")["status"] in ("warn", "fail")
    # A judge that labels by position disagrees with itself once the units are reordered.
    assert check(health, "self_agreement")["status"] == "fail"


def test_headline_is_marked_untrustworthy_and_health_details_follow(degenerate_run: Path) -> None:
    markdown = (degenerate_run / rundir.REPORT_MD).read_text(encoding="utf-8")
    assert (markdown.index("## Headline") < markdown.index(UNTRUSTWORTHY) < markdown.index("Health: FAIL")
            < markdown.index("## Accuracy and coverage (UNTRUSTWORTHY") < markdown.index("## Health"))
    assert TEMPLATE_QUESTION in markdown and "'...'" in markdown
    html = (degenerate_run / rundir.REPORT_HTML).read_text(encoding="utf-8")
    assert (html.index("<h2>Headline</h2>") < html.index(escape(UNTRUSTWORTHY)) < html.index("<h2>What went wrong</h2>")
            < html.index("<h2>Accuracy and coverage <span class=\"tag\">UNTRUSTWORTHY") < html.index("<h2>Health</h2>"))
    assert "<figcaption>UNTRUSTWORTHY: health failed</figcaption>" in html


async def test_ordinary_simulated_run_passes(small_corpus: Path, tmp_path: Path) -> None:
    await start_exam(sim_settings(max_rounds=3), ExamRequest([str(small_corpus)]), tmp_path, quiet=True)
    health = health_of(tmp_path)
    assert health["status"] == "pass", [(c["name"], c["status"]) for c in health["checks"]]
    assert health["self_agreement"]["value"] == 1.0  # a judge without noise agrees with itself
    markdown = (tmp_path / rundir.REPORT_MD).read_text(encoding="utf-8")
    assert "health: PASS" in markdown and UNTRUSTWORTHY not in markdown


def _config(path: Path, settings: Settings) -> Path:
    path.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
    return path


def test_strict_exits_4_on_failed_health_after_writing_reports(small_corpus: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path / "config.yaml", degenerate_settings(max_rounds=2))
    out = tmp_path / "run"
    code = main(["run", str(small_corpus), "--config", str(config), "--out", str(out), "--quiet", "--strict"])
    assert code == 4
    for name in (rundir.REPORT_JSON, rundir.REPORT_MD, rundir.REPORT_HTML):
        assert (out / name).is_file()
    printed = capsys.readouterr()
    assert "health: FAIL" in printed.out and "exit 4" in printed.err
    assert main(["report", str(out), "--strict"]) == 4
    assert main(["report", str(out)]) == 0  # without --strict a failed health is reported, not an error
    assert main(["resume", str(out), "--strict", "--quiet"]) == 4


def test_strict_exits_0_on_a_healthy_run(small_corpus: Path, tmp_path: Path) -> None:
    config = _config(tmp_path / "config.yaml", sim_settings(max_rounds=2))
    assert main(["run", str(small_corpus), "--config", str(config), "--out", str(tmp_path / "run"), "--quiet",
                 "--strict"]) == 0


def test_texts_are_compared_in_any_script() -> None:
    assert normalise("What IS the answer?  [ref:a,b]") == "what is the answer"
    assert normalise("Что это такое?") == "что это такое"
    assert is_placeholder("...") and is_placeholder(" N/A ") and is_placeholder("")
    assert not is_placeholder("The answer says so.")


def test_thresholds_read_both_ways() -> None:
    assert REPEATED_QUESTIONS.status(0.05) == "pass" and REPEATED_QUESTIONS.status(0.06) == "warn"
    assert REPEATED_QUESTIONS.status(0.3) == "fail"
    assert COPIED_UNITS.status(0.0) == "pass" and COPIED_UNITS.status(0.01) == "warn"
    assert SELF_AGREEMENT.status(0.9) == "pass" and SELF_AGREEMENT.status(0.7) == "warn"
    assert SELF_AGREEMENT.status(0.5) == "fail"
    assert Threshold(warn=0.5, fail=None).status(1.0) == "warn"
