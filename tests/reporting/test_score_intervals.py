"""The exam report's accuracy and coverage intervals come from examiner.stats.intervals.accuracy_interval
(issue 28, item 7): with few documents or clusters the small-sample interval is used and the report says
so; no interval is zero-width unless the data are; intervals stay within [0, 1]."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from examiner.core.records import UnitOutcome, UnitRecord
from examiner.core.rundir import RunDir
from examiner.reporting import build_report, load_run
from examiner.reporting.compare import compare
from examiner.reporting.model import ExamReport
from examiner.reporting.reading import load_report
from examiner.reporting.score_intervals import ratio_estimate, small_sample_note, target_estimates
from examiner.reporting.terminal import exam_summary, print_summary
from examiner.stats.correlation import bootstrap_ci, weighted_ratio
from examiner.stats.intervals import SMALL_SAMPLE_GROUPS, accuracy_interval
from tests.helpers.sample_run import write_sample_run

EIGHT = [1, 1, 1, 0, 1, 1, 1, 0]
"""8 units in 2 clusters, 3 of 4 correct in each: the issue's 0.750 [0.750, 0.750]."""
TWO_CLUSTERS = ["c1"] * 4 + ["c2"] * 4


def test_eight_units_in_two_clusters_get_a_small_sample_interval_that_is_not_a_point() -> None:
    old = bootstrap_ci({c: np.array([(v, 1.0) for v, k in zip(EIGHT, TWO_CLUSTERS) if k == c], dtype=float)
                        for c in ("c1", "c2")}, weighted_ratio, n=2000, seed=0, weighted=True)
    assert old.low == old.high == 0.75  # what the report printed before
    est = ratio_estimate(EIGHT, ["doc"] * 8, TWO_CLUSTERS)
    assert est["value"] == 0.75 and (est["num"], est["den"], est["clusters"]) == (6, 8, 2)
    assert 0.0 <= est["low"] < 0.75 < est["high"] <= 1.0
    assert est["small_sample"] and est["groups"] == 2 and est["grouped_by"] == "clusters"
    assert small_sample_note(est) == f"small sample (2 clusters): {est['method']}"
    assert "Wilson" in est["method"]
    direct = accuracy_interval(EIGHT, ["doc"] * 8, TWO_CLUSTERS)
    assert (est["low"], est["high"]) == (direct.low, direct.high)


def test_many_documents_use_the_same_wilson_interval_and_no_note() -> None:
    rng = np.random.default_rng(3)
    docs = [f"d{i // 5}" for i in range(5 * SMALL_SAMPLE_GROUPS)]
    values = [int(v) for v in rng.random(len(docs)) < 0.7]
    est = ratio_estimate(values, docs, docs)
    direct = accuracy_interval(values, docs, docs)
    assert "Wilson" in est["method"]
    assert not est["small_sample"] and est["grouped_by"] == "documents" and est["groups"] == SMALL_SAMPLE_GROUPS
    assert (est["low"], est["high"], est["method"]) == (direct.low, direct.high, direct.method)
    assert small_sample_note(est) is None


@pytest.mark.parametrize("values", [[1] * 8, [0] * 8, [1, 0] * 4])
def test_intervals_stay_in_unit_range_and_have_width(values: list[int]) -> None:
    for docs in (["doc"] * 8, [f"d{i}" for i in range(8)]):
        est = ratio_estimate(values, docs, TWO_CLUSTERS)
        assert 0.0 <= est["low"] <= est["value"] <= est["high"] <= 1.0
        assert est["high"] > est["low"]


def test_uncovered_units_leave_accuracy_and_no_units_give_no_interval() -> None:
    est = ratio_estimate([1, None, 0, None], ["a", "a", "b", "b"], ["x", "x", "y", "y"])
    assert (est["num"], est["den"], est["clusters"], est["groups"]) == (1, 2, 2, 2)
    empty = ratio_estimate([None, None], ["a", "b"], ["x", "y"])
    assert empty["value"] is None and empty["low"] is None and empty["high"] is None and empty["den"] == 0


@pytest.fixture(scope="module")
def eight_unit_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample run cut down to 8 units of one target in 2 exam clusters, 3 of 4 correct in each."""
    root = tmp_path_factory.mktemp("eight")
    run = write_sample_run(root / "run", root / "corpus", targets=("alpha",))
    files = RunDir(run)
    units = [UnitRecord.model_validate_json(line) for line in
             files.record_file(UnitRecord).read_text(encoding="utf-8").splitlines()][:8]
    files.record_file(UnitRecord).write_text("\n".join(u.model_dump_json() for u in units) + "\n", encoding="utf-8")
    outcomes = [UnitOutcome(unit_id=u.id, target="alpha", status="correct" if ok else "incorrect", verdict_id=None,
                            times_targeted=1, times_targeted_uncovered=0, covered_round=1, cluster_id=cluster,
                            qtype="what")
                for u, ok, cluster in zip(units, EIGHT, TWO_CLUSTERS)]
    files.record_file(UnitOutcome).write_text("\n".join(o.model_dump_json() for o in outcomes) + "\n",
                                              encoding="utf-8")
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    (run / "run.json").write_text(json.dumps({**info, "units": 8}), encoding="utf-8")
    build_report(run)
    return run


def test_an_eight_unit_run_reports_a_small_sample_interval(eight_unit_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = load_report(eight_unit_run).report
    assert isinstance(report, ExamReport)
    acc = report.targets["alpha"].accuracy
    assert acc.value == 0.75 and acc.low is not None and acc.high is not None and acc.low < 0.75 < acc.high
    assert acc.small_sample and acc.groups is not None and acc.groups <= 2 and acc.method
    data = json.loads((eight_unit_run / "report.json").read_text(encoding="utf-8"))["targets"]["alpha"]["accuracy"]
    assert {"value", "low", "high", "num", "den", "clusters", "method", "small_sample"} <= set(data)
    note = f"alpha: accuracy small sample ({acc.groups} {acc.grouped_by}): {acc.method}"
    assert note in (eight_unit_run / "report.md").read_text(encoding="utf-8")
    assert note in (eight_unit_run / "report.html").read_text(encoding="utf-8")
    print_summary(exam_summary(report, eight_unit_run), Console(file=io.StringIO(), width=100))
    assert note in capsys.readouterr().out  # lines print as they are
    figures = target_estimates(load_run(eight_unit_run), list(load_run(eight_unit_run).outcomes["alpha"].values()))
    assert (figures[0]["low"], figures[0]["high"]) == (acc.low, acc.high)


def test_compare_names_the_small_sample_interval(eight_unit_run: Path) -> None:
    markdown, page = compare([eight_unit_run])
    assert "alpha: accuracy small sample (2 " in markdown and "alpha: accuracy small sample (2 " in page
    assert "resample source documents" in markdown
