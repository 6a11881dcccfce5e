"""`compare` reads each run as its report does (people's overrides in force, for the accuracies and for the
paired statistics) and marks a run whose health failed UNTRUSTWORTHY in Markdown, HTML and JSON.

The run is the hand-written sample of tests.helpers.sample_run (targets alpha and beta on 12 units)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examiner.core.overrides import OverrideRecord, utc_now
from examiner.core.rundir import RunDir
from examiner.reporting import load_run
from examiner.reporting.compare import (UNTRUSTWORTHY_MARK, compare_html, compare_markdown, compare_report,
                                        health_cell, marked_headline)
from examiner.reporting.paired import paired_units
from examiner.reporting.with_overrides import apply_overrides, overrides_summary
from examiner.reporting.writer import report_data

FAILED = {"status": "fail", "checks": [{"name": "repeated_questions", "status": "fail"},
                                       {"name": "one_label", "status": "pass"}]}


@pytest.fixture()
def run_dir(sample_run_copy: Path) -> Path:
    """A fresh copy of the sample run (tests/conftest.py) for each test."""
    return sample_run_copy


def _flip_a_shared_unit(run_dir: Path) -> str:
    """Override alpha's covering `correct` verdict on a unit beta also covered to `incorrect`: a change
    both the accuracy and McNemar's discordant counts must show. Returns the unit id."""
    run = load_run(run_dir)
    alpha, beta = run.outcomes["alpha"], run.outcomes["beta"]
    unit_id = next(u for u in sorted(alpha) if alpha[u].status == "correct" and beta[u].status in ("correct", "incorrect"))
    verdict = run.verdicts[alpha[unit_id].verdict_id]  # type: ignore[index]
    RunDir(run_dir).append_override(OverrideRecord(question_id=verdict.question_id, unit_id=unit_id,
                                                   verdict_before=verdict.verdict, verdict="incorrect",
                                                   reason="the source says otherwise", who="ana", at=utc_now()))
    return unit_id


def test_accuracy_and_paired_statistics_are_those_with_overrides(run_dir: Path) -> None:
    before = compare_report([run_dir])
    _flip_a_shared_unit(run_dir)
    report = compare_report([run_dir])
    alpha = next(t for t in report.targets if t.target == "alpha")
    expected = overrides_summary(load_run(run_dir))["targets"]["alpha"]  # type: ignore[index]
    assert alpha.accuracy.value == pytest.approx(expected["accuracy_with_overrides"]["value"])
    assert alpha.accuracy.value != pytest.approx(expected["accuracy_judge"]["value"])
    assert alpha.counts.correct == before.targets[0].counts.correct - 1 and alpha.overrides == 1
    assert next(t for t in report.targets if t.target == "beta").overrides == 0
    # The paired section counts the overridden unit as alpha's error, as the overridden run does.
    changed = apply_overrides(load_run(run_dir))
    units = paired_units(changed, "alpha", changed, "beta")
    section = report.paired[0]
    assert (section.mcnemar.a_only, section.mcnemar.b_only) == (
        sum(a == 1 and b == 0 for a, b in zip(units.a, units.b)), sum(a == 0 and b == 1 for a, b in zip(units.a, units.b)))
    assert (section.mcnemar.a_only, section.mcnemar.b_only) != (before.paired[0].mcnemar.a_only,
                                                                before.paired[0].mcnemar.b_only)
    markdown = compare_markdown(report)
    assert "Overrides applied: 1 verdicts corrected by people" in markdown and "alpha 1" in markdown
    assert "Overrides applied" not in compare_markdown(before)


def test_a_failed_run_is_marked_untrustworthy_everywhere(run_dir: Path) -> None:
    report = compare_report([run_dir], health_of=lambda run: FAILED)
    assert all(not t.trustworthy and t.health == "fail" for t in report.targets)
    assert health_cell(report.targets[0]) == UNTRUSTWORTHY_MARK
    markdown, html = compare_markdown(report), compare_html(report)
    assert "**UNTRUSTWORTHY: run" in markdown and "health: FAIL (repeated_questions fail)" in markdown
    assert f"| {UNTRUSTWORTHY_MARK} |" in markdown
    assert marked_headline(report, report.paired[0]).startswith("UNTRUSTWORTHY (alpha, beta: health failed) ")
    assert "UNTRUSTWORTHY: run" in html and UNTRUSTWORTHY_MARK in html
    data: dict[str, Any] = report_data(report)
    assert [t["trustworthy"] for t in data["targets"]] == [False, False]
    assert data["targets"][0]["health_line"].startswith("health: FAIL")


def test_a_healthy_run_is_not_marked_and_an_unchecked_one_says_so(run_dir: Path) -> None:
    healthy = compare_report([run_dir], health_of=lambda run: {"status": "pass", "checks": []})
    assert "UNTRUSTWORTHY" not in compare_markdown(healthy) and health_cell(healthy.targets[0]) == "pass"
    assert health_cell(compare_report([run_dir]).targets[0]) == "not checked"
