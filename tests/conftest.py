"""Fixtures shared by several test modules (pytest finds them here; no module imports them by name)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers.datasets import FIXTURE_DATA
from tests.helpers.simulated_exam import every_role_settings


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fast", action="store_true",
                     help="the fast loop: skip each test the moment it drives a whole exam, starts a server or starts "
                          "examiner in a child process (tests/helpers/fast_loop.py)")


def pytest_configure(config: pytest.Config) -> None:
    controller = not hasattr(config, "workerinput") and bool(config.getoption("numprocesses", None))
    if config.getoption("--fast") and not controller:  # pytest-xdist's controller starts its workers as child Pythons
        from tests.helpers.fast_loop import install

        install()


@pytest.fixture(scope="session", autouse=True)
def user_data_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's data folder (XDG_DATA_HOME: the endpoints a user confirmed for resumes) inside pytest's
    temporary folder, so that no test reads or writes the real one."""
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("user-data")
        patch.setenv("XDG_DATA_HOME", str(folder))
        yield folder


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic two-target run of tests/helpers/sample_run.py, written once per session: read it,
    never write to it (take `sample_run_copy` for that)."""
    from tests.helpers.sample_run import write_sample_run

    root = tmp_path_factory.mktemp("sample-run")
    return write_sample_run(root / "run", root / "corpus")


@pytest.fixture()
def sample_run_copy(sample_run: Path, tmp_path: Path) -> Path:
    """A fresh copy of the sample run for a test that appends to it (overrides, labels)."""
    copy = tmp_path / "run"
    shutil.copytree(sample_run, copy)
    return copy


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first two documents of the examiner handbook corpus, copied to a folder of their own."""
    folder = tmp_path_factory.mktemp("small")
    for source in sorted(Path("corpora/examiner-handbook").glob("*.md"))[:2]:
        (folder / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the first document of the examiner handbook: the smallest corpus a command runs on."""
    folder = tmp_path_factory.mktemp("corpus")
    source = sorted(Path("corpora/examiner-handbook").glob("0*.md"))[0]
    shutil.copy(source, folder / source.name)
    return folder


@pytest.fixture()
def fixture_data(monkeypatch: pytest.MonkeyPatch) -> Path:
    """$EXAMINER_DATA set to tests/fixtures/data for the test: the public sets' names (`llmbar:Natural`,
    `summeval`) and loaders read the invented stand-ins, whatever data folder the run was given."""
    monkeypatch.setenv("EXAMINER_DATA", str(FIXTURE_DATA))
    return FIXTURE_DATA


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`every_role_settings()` written as a YAML file, for `--config`."""
    path = tmp_path_factory.mktemp("config") / "sim.yaml"
    path.write_text(yaml.safe_dump(every_role_settings().model_dump(mode="json")), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def finished_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small completed simulated exam of `corpus`; each test damages its own copy."""
    from examiner.exam.runner import ExamRequest, start_exam  # here: seconds to import, which most tests never need

    run_dir = tmp_path_factory.mktemp("finished") / "run"
    asyncio.run(start_exam(every_role_settings(), ExamRequest([str(corpus)], run_id="bad-input"), run_dir, quiet=True,
                           report=False))
    return run_dir


REPORTS_VALIDATED: dict[str, int] = {"files": 0}
"""How many report.json files the session's schema check validated (printed in the terminal summary)."""


@pytest.fixture(scope="session", autouse=True)
def every_report_json_matches_the_schema(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    """At the end of the session, every report.json a test wrote under pytest's temporary folders must match
    the shipped JSON Schema (examiner/reporting/schema/): a report that drifts from it fails the suite."""
    from tests.helpers.report_schema import validate_reports_under

    yield
    checked, problems = validate_reports_under(tmp_path_factory.getbasetemp())
    REPORTS_VALIDATED["files"] = checked
    worker_output = getattr(request.config, "workeroutput", None)  # a pytest-xdist worker reports to the controller
    if worker_output is not None:
        worker_output["reports_validated"] = checked
    assert not problems, "report.json files that do not match the schema:\n" + "\n".join(problems[:20])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """pytest-xdist's controller adds up what each worker validated."""
    REPORTS_VALIDATED["files"] += getattr(node, "workeroutput", {}).get("reports_validated", 0)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORTS_VALIDATED["files"]:
        terminalreporter.write_line(f"report.json files validated against the schema: {REPORTS_VALIDATED['files']}")
