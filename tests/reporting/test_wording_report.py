"""The wording check's section in report.json, report.md and report.html: written from the run's
rewording.jsonl and ledger, valid against the shipped schema, absent without `--paraphrases`, its text
escaped in HTML and its heading marked UNTRUSTWORTHY when the run's health failed."""

from __future__ import annotations

import asyncio
import json
from html import escape
from pathlib import Path

import jsonschema
import pytest

from examiner.core import rundir
from examiner.core.records import WordingRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.ledger import answered
from examiner.reporting.html import render_html
from examiner.reporting.json_schema import shipped_schema
from examiner.reporting.markdown import render_markdown
from examiner.reporting.model import ExamReport
from examiner.reporting.wording import wording_section
from tests.helpers.wording_exam import TARGETS, settings


def _exam(small_corpus: Path, folder: Path, k: int) -> ExamReport:
    asyncio.run(start_exam(settings(k, share=1.0), ExamRequest([str(small_corpus)], targets=TARGETS), folder,
                           quiet=True))
    data = json.loads((folder / rundir.REPORT_JSON).read_text(encoding="utf-8"))
    jsonschema.validate(data, shipped_schema())
    return ExamReport.model_validate(data)


@pytest.fixture(scope="module")
def checked(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ExamReport]:
    """A one-round run of two targets with the wording check on every cluster (K = 2)."""
    folder = tmp_path_factory.mktemp("wording")
    return folder, _exam(small_corpus, folder, 2)


def test_the_section_reaches_every_report_file(checked: tuple[Path, ExamReport]) -> None:
    tmp_path, report = checked
    section = report.wording
    assert section is not None
    records = RunDir(tmp_path).records(WordingRecord)
    figures = wording_section(tmp_path)
    assert figures is not None
    assert (section.paraphrases, section.share) == (2, 1.0)
    assert section.clusters_reasked == len({r.cluster_id for r in records.values()}) == section.clusters_total > 1
    rows = [r for r in answered(RunDir(tmp_path).ledger_records()) if r.stage == "rewording"]
    assert section.calls == len(rows) == section.clusters_reasked * (1 + 2 * 2 * len(TARGETS))
    assert sorted(section.targets) == TARGETS
    for name, parts in section.targets.items():
        assert parts.wording == figures.targets[name].wording and parts.paraphrased == section.clusters_reasked
    assert [(p.a, p.b) for p in section.pairs] == [("a", "b")]
    flip = section.pairs[0].rank_flip
    assert flip is not None and 0 <= flip <= 1
    markdown = (tmp_path / rundir.REPORT_MD).read_text(encoding="utf-8")
    assert markdown.index("## Accuracy and coverage") < markdown.index("## Wording check") < markdown.index("## Health")
    assert (f"{section.clusters_reasked} of round 1's {section.clusters_total} clusters (share 1) had their question "
            "re-asked in 2 other wordings") in markdown
    assert f"| b - a | {section.pairs[0].difference:+.3f} |" in markdown
    html = (tmp_path / rundir.REPORT_HTML).read_text(encoding="utf-8")
    assert "<h2>Wording check</h2>" in html and "chance a rewording reverses the order" in html


def test_no_section_without_the_check(small_corpus: Path, tmp_path: Path) -> None:
    assert _exam(small_corpus, tmp_path, 0).wording is None
    assert "Wording check" not in (tmp_path / rundir.REPORT_MD).read_text(encoding="utf-8")


def test_marked_when_health_failed_and_escaped(checked: tuple[Path, ExamReport]) -> None:
    with_check = checked[1]
    assert with_check.wording is not None and with_check.health is not None
    hostile = "<b>x|y</b>"
    section = with_check.wording.model_copy(update={"targets": {hostile: with_check.wording.targets["a"]}})
    failed = with_check.model_copy(update={"wording": section,
                                           "health": with_check.health.model_copy(update={"status": "fail"})})
    assert "## Wording check (UNTRUSTWORTHY: health failed)" in render_markdown(failed)
    assert "x\\|y" in render_markdown(failed)
    html = render_html(failed, {})
    assert "<h2>Wording check <span class=\"tag\">UNTRUSTWORTHY" in html
    assert hostile not in html and escape(hostile) in html
