"""Fixtures shared by several test modules."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first two documents of the examiner handbook corpus, copied to a folder of their own."""
    folder = tmp_path_factory.mktemp("small")
    for source in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:2]:
        (folder / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


REPORTS_VALIDATED: dict[str, int] = {"files": 0}
"""How many report.json files the session's schema check validated (printed in the terminal summary)."""


@pytest.fixture(scope="session", autouse=True)
def every_report_json_matches_the_schema(tmp_path_factory: pytest.TempPathFactory):
    """At the end of the session, every report.json a test wrote under pytest's temporary folders must match
    the shipped JSON Schema (examiner/reporting/schema/): a report that drifts from it fails the suite."""
    from tests.helpers.report_schema import validate_reports_under

    yield
    checked, problems = validate_reports_under(tmp_path_factory.getbasetemp())
    REPORTS_VALIDATED["files"] = checked
    assert not problems, "report.json files that do not match the schema:\n" + "\n".join(problems[:20])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORTS_VALIDATED["files"]:
        terminalreporter.write_line(f"report.json files validated against the schema: {REPORTS_VALIDATED['files']}")
