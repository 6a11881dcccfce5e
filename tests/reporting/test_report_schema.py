"""The published report schema: the shipped file is what the models generate, it is a valid JSON Schema,
and a report of each kind (exam, judge, meta, compare) validates against it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from examiner.reporting import build_report
from examiner.reporting.compare import compare_report
from examiner.reporting.json_schema import SCHEMA_FILE, report_schema, shipped_schema
from examiner.reporting.model import SCHEMA_VERSION, REPORT
from examiner.reporting.writer import report_data, strict
from tests.helpers.report_schema import problems_of, validator
from tests.helpers.sample_run import write_sample_run


def test_shipped_schema_is_what_the_models_generate() -> None:
    """Regenerate with `python -m examiner.reporting.json_schema` after changing a model."""
    assert shipped_schema() == report_schema()
    assert SCHEMA_FILE == f"report-v{SCHEMA_VERSION}.schema.json"
    Draft202012Validator.check_schema(shipped_schema())


def test_schema_file_ships_as_package_data() -> None:
    text = Path("pyproject.toml").read_text(encoding="utf-8")
    assert '"reporting/schema/*.json"' in text


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("schema")
    return (write_sample_run(root / "one", root / "corpus"),
            write_sample_run(root / "two", root / "corpus", targets=("gamma", "delta")))


def test_exam_report_validates(sample_runs: tuple[Path, Path]) -> None:
    path = build_report(sample_runs[0])["json"]
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION and data["kind"] == "exam"
    assert problems_of(path) == []


def test_compare_report_validates(sample_runs: tuple[Path, Path]) -> None:
    report = compare_report(list(sample_runs))
    data = strict(report_data(report))
    assert data["kind"] == "compare" and len(data["targets"]) == 4
    assert list(validator().iter_errors(data)) == []


def test_a_drifted_report_fails_the_schema(sample_runs: tuple[Path, Path]) -> None:
    """What the conftest hook catches: an unknown key, a missing section, a wrong version."""
    data = json.loads(build_report(sample_runs[1])["json"].read_text(encoding="utf-8"))
    check = validator()
    assert list(check.iter_errors(data)) == []
    assert list(check.iter_errors({**data, "surprise": 1}))
    assert list(check.iter_errors({k: v for k, v in data.items() if k != "cost"}))
    assert list(check.iter_errors({**data, "schema_version": SCHEMA_VERSION + 1}))
    targets = {name: {**t, "accuracy": {**t["accuracy"], "extra": 0}} for name, t in data["targets"].items()}
    assert list(check.iter_errors({**data, "targets": targets}))


def test_null_reasons_are_allowed_beside_any_figure() -> None:
    """The writer turns a non-finite figure into null with `<key>_null_reason` beside it; the schema
    allows that on every object, and the model reads such a file back."""
    data = {"method": "judge-stats", "rows_judged": 0, "rows_skipped": 0, "skipped": [],
            "single": {"unparseable_convention": "drop", "lowest_score": None, "n_judgments": 0, "n_scored": 0,
                       "n_unparseable": 0, "n_failed_calls": 0, "mean_score": math.nan}}
    written = strict(report_data(REPORT.validate_python({**data, "kind": "judge"})))
    assert written["single"]["mean_score"] is None and "mean_score_null_reason" in written["single"]
    assert list(validator().iter_errors(written)) == []
    assert REPORT.validate_python(written).single.mean_score is None
