"""Judging and meta-evaluation reports built once as their models: report.md and report.html come from the
model alone (so report.json rebuilds them), the meta sections are closed and typed per method, and the
terminal summaries read the model."""

from __future__ import annotations

import asyncio
import io
import json
import math
from pathlib import Path

import pytest
from rich.console import Console

import examiner.simulator.meta_roles  # noqa: F401
from examiner.core.assessments import Assessment, MetaItem
from examiner.core.config import EndpointSpec, Settings
from examiner.judging.sections import build_report, judge_report, markdown, write_outputs
from examiner.meta.pipeline import MetaConfig, run_meta
from examiner.meta.sections import meta_report, to_html, to_markdown, write_reports
from examiner.reporting.model import JudgeReport, MetaReport
from examiner.reporting.model.meta import IndividualCounts, PairwiseCounts
from examiner.reporting.reading import load_report
from examiner.reporting.terminal import judge_summary, meta_summary, print_summary
from examiner.reporting.writer import report_data
from tests.helpers.report_schema import validator

SETTINGS = Settings(endpoints={name: EndpointSpec(provider="simulated", model=model, max_concurrency=8)
                               for name, model in (("e80", "sim-acc0.8"), ("e50", "sim-acc0.5"),
                                                   ("meta", "sim-rel0.9"))},
                    roles={"meta_judge": "meta"})


def _pairwise_records() -> list[dict[str, object]]:
    verdicts = [1, 2, 1, None, 2, 2, 1, 1]
    return [{"id": f"r{i // 2}", "order": "original" if i % 2 == 0 else "swapped", "verdict": v,
             "label": 1 + (i // 2) % 2, "panel": {"a": {"verdict": 1}, "b": {"verdict": v}}}
            for i, v in enumerate(verdicts)]


def _scored_records() -> list[dict[str, object]]:
    scores = [1.0, 3.0, 2.0, 5.0, None, 4.0]
    return [{"id": f"s{i}", "score": s, "human": float(i % 4), "group": f"g{i % 2}", "system": f"m{i % 3}"}
            for i, s in enumerate(scores)]


@pytest.mark.parametrize("records", [_pairwise_records(), _scored_records()], ids=["pairwise", "single"])
def test_judge_report_md_rebuilds_from_report_json(records: list[dict[str, object]], tmp_path: Path) -> None:
    report = judge_report("pairwise" if "order" in records[0] else "geval", records,
                          [{"line": 4, "field": "label", "message": "line 4: no label"}],
                          {"judge": "j", "calls": 3, "cost_usd": 0.5, "dataset": "d.jsonl"}, unparseable="wrong")
    assert isinstance(report, JudgeReport)
    paths = write_outputs(tmp_path, records, report)
    read_back = load_report(paths["report_json"]).report
    assert isinstance(read_back, JudgeReport)
    assert markdown(read_back) == paths["report_md"].read_text(encoding="utf-8")
    text = markdown(report)
    assert "- judge: j" in text and "- calls: 3" in text and "- model:" not in text  # only the facts given
    assert "## Skipped rows" in text and "line 4: no label" in text


def test_build_report_is_the_models_data() -> None:
    """The mapping callers still take is report.json's data: the same model, dumped."""
    records = _pairwise_records()
    data = build_report("pairwise", records, [], {"dataset": "d"})
    model = judge_report("pairwise", records, [], {"dataset": "d"})
    assert data == report_data(model) and data["kind"] == "judge" and data["pairwise"]["n_judgments"] == 8
    assert markdown(model) == markdown(JudgeReport.model_validate(data))


def test_judge_summary_reads_the_model() -> None:
    report = judge_report("pairwise", _pairwise_records(), [], {"judge": "j", "status": "ok"}, unparseable="wrong")
    parts = judge_summary(report)
    assert parts[:2] == ["judging report: pairwise on -", "judge j, status ok, rows judged 4, rows skipped 0"]
    assert "counted as a wrong label" in parts[3]
    console = Console(file=io.StringIO(), width=80)
    print_summary([p for p in parts if not isinstance(p, str)], console)
    tables = console.file.getvalue()  # type: ignore[attr-defined]
    assert "judge vs labels" in tables and "judge panel" in tables and "position swap" in tables
    single = judge_summary(judge_report("geval", _scored_records(), [], {}))
    assert single[2].startswith("judgments 6, scored 5, unparseable 1") and single[-2].startswith("Levels: sample")
    assert single[-1].startswith("judge bias: ")  # the bias audit's line closes the summary


@pytest.fixture(scope="module")
def meta_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A JDEval run in both orders and a BSMEval run, reports written."""
    root = tmp_path_factory.mktemp("meta")
    items = [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Summarise fact {i}.", output_1=f"Fact {i} holds.",
                      output_2=f"Something else about {i}.", gold_label="Answer2" if i % 2 else "Answer1")
             for i in range(6)]
    out = {}
    for method, both in (("jdeval", True), ("bsmeval", False)):
        config = MetaConfig(evaluators=["e80", "e50"], method=method, both_orders=both, bootstrap=20, shuffles=10)
        run = asyncio.run(run_meta(items, config, SETTINGS, root / method))
        write_reports(run, root / method)
        out[method] = root / method
    return out


def test_meta_reports_rebuild_from_report_json(meta_runs: dict[str, Path]) -> None:
    for folder in meta_runs.values():
        report = load_report(folder).report
        assert isinstance(report, MetaReport)
        assert to_markdown(report) == (folder / "report.md").read_text(encoding="utf-8")
        assert to_html(report) == (folder / "report.html").read_text(encoding="utf-8")


def test_meta_sections_are_typed_per_method(meta_runs: dict[str, Path]) -> None:
    jdeval = load_report(meta_runs["jdeval"]).report
    bsmeval = load_report(meta_runs["bsmeval"]).report
    assert isinstance(jdeval, MetaReport) and isinstance(bsmeval, MetaReport)
    assert isinstance(jdeval.counts, PairwiseCounts) and jdeval.counts.order_consistency is not None
    assert isinstance(bsmeval.counts, IndividualCounts) and bsmeval.counts.top_branches
    assert jdeval.baseline.metric == "accuracy" and jdeval.baseline.detail["e80"].with_gold == 6
    assert jdeval.rankings.elo is not None and {r.player for r in jdeval.rankings.elo.ratings} == {"e80", "e50"}
    assert jdeval.rankings.agreement is not None and jdeval.rankings.agreement.elo is not None


def test_meta_sections_are_closed_in_the_schema(meta_runs: dict[str, Path]) -> None:
    data = json.loads((meta_runs["jdeval"] / "report.json").read_text(encoding="utf-8"))
    check = validator()
    assert list(check.iter_errors(data)) == []
    for section in ("baseline", "rankings", "counts"):
        assert list(check.iter_errors({**data, section: {**data[section], "surprise": 1}})), section
    elo = {**data["rankings"]["elo"], "ratings": [{**data["rankings"]["elo"]["ratings"][0], "mean": "high"}]}
    assert list(check.iter_errors({**data, "rankings": {**data["rankings"], "elo": elo}}))
    individual = {**data["counts"], "top_branches": {"x": 1}}  # a pairwise method's counts with BSMEval's
    assert list(check.iter_errors({**data, "counts": {k: v for k, v in individual.items() if k != "outcomes"}}))


def test_meta_summary_reads_the_model(meta_runs: dict[str, Path]) -> None:
    report = load_report(meta_runs["jdeval"]).report
    assert isinstance(report, MetaReport)
    parts = meta_summary(report)
    console = Console(file=io.StringIO(), width=80)
    print_summary(parts[:1], console)
    table = console.file.getvalue()  # type: ignore[attr-defined]
    assert f"meta-evaluation (jdeval), {report.rankings.matches} matches" in table
    assert "e80" in table and "e50" in table
    assert isinstance(parts[-1], str) and parts[-1].startswith("Elo vs baseline:")


def test_an_undefined_agreement_reads_the_same_from_the_run_and_the_file(tmp_path: Path) -> None:
    """Two evaluators with the same decisions tie on the baseline, so the rank agreement is undefined: NaN
    in memory, null with its reason in report.json; the summary says the same for both."""
    items = [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Say {i}.", output_1=f"{i}.", output_2="No.",
                      gold_label="Answer1" if i % 3 else "Answer2") for i in range(6)]
    imported = [Assessment(item_id=i.id, evaluator=e, decision="Answer1", explanation="x", source="imported")
                for i in items for e in ("x", "y")]
    run = asyncio.run(run_meta(items, MetaConfig(evaluators=["x", "y"], bootstrap=20, shuffles=10), SETTINGS,
                               tmp_path, imported=imported))
    in_memory = meta_report(run)
    assert in_memory.rankings.agreement and in_memory.rankings.agreement.elo
    assert math.isnan(in_memory.rankings.agreement.elo.kendall_tau or 0.0)
    write_reports(run, tmp_path)
    from_file = load_report(tmp_path).report
    assert isinstance(from_file, MetaReport) and from_file.rankings.agreement and from_file.rankings.agreement.elo
    assert from_file.rankings.agreement.elo.kendall_tau is None
    line = "Elo vs baseline: rank correlation and top-1 match undefined: baselines tie"
    assert meta_summary(in_memory)[-1] == meta_summary(from_file)[-1] == line
