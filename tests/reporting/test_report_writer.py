"""The one report writer: strict JSON everywhere (a non-finite number is null with a reason beside it, and
json.dumps(allow_nan=False) guards the rest), the same for exam, judge and meta reports.

Regression guarded: meta/report.py wrote a literal NaN into report.json when the baseline ranking had
ties (the rank correlation with a constant ranking is undefined), which strict JSON parsers reject."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import examiner.simulator.meta_roles  # noqa: F401 - simulated meta-judge behaviours
from examiner.core.config import EndpointSpec, Settings
from examiner.core.assessments import Assessment, MetaItem
from examiner.judging.sections import build_report as judging_report, write_outputs
from examiner.meta import ranking
from examiner.meta.pipeline import MetaConfig, MetaRun, run_meta
from examiner.meta.sections import meta_report, to_markdown, write_reports
from examiner.reporting.model import SCHEMA_VERSION, JudgeReport
from examiner.reporting.writer import NULL_REASON, UNDEFINED, cell, dumps, strict, write_report


def strict_load(path: Path) -> Any:
    """json.loads that fails on NaN / Infinity instead of accepting Python's extension."""
    return json.loads(path.read_text(encoding="utf-8"),
                      parse_constant=lambda c: pytest.fail(f"{path.name}: non-standard JSON constant {c}"))


def test_non_finite_numbers_become_null_with_a_reason() -> None:
    data = {"tau": float("nan"), "ok": 0.5, "hi": float("inf"), "nested": {"rho": float("-inf")},
            "series": [1.0, float("nan")], 3: (1, 2)}
    out = strict(data)
    assert out["tau"] is None and "NaN" in out["tau" + NULL_REASON]
    assert out["ok"] == 0.5 and "ok" + NULL_REASON not in out
    assert out["hi"] is None and "+Infinity" in out["hi" + NULL_REASON]
    assert out["nested"]["rho"] is None and "-Infinity" in out["nested"]["rho" + NULL_REASON]
    assert out["series"] == [1.0, None] and out["series" + NULL_REASON].startswith("item 1: ")
    assert out["3"] == [1, 2]
    json.dumps(out, allow_nan=False)
    assert json.loads(dumps(data))["tau"] is None


def _judge_report(**fields: object) -> JudgeReport:
    """A small judging report (no row judged) carrying the given fields."""
    return JudgeReport(method="pairwise", rows_judged=0, rows_skipped=0, skipped=[], **fields)


def test_write_report_writes_strict_json_and_the_renderings(tmp_path: Path) -> None:
    paths = write_report(tmp_path, _judge_report(wall_s=float("nan")), markdown="# md\n", stem="s-")
    assert set(paths) == {"json", "md"} and paths["json"].name == "s-report.json"
    assert strict_load(paths["json"]) == {
        "schema_version": SCHEMA_VERSION, "kind": "judge", "method": "pairwise", "wall_s": None,
        "wall_s" + NULL_REASON: strict({"x": math.nan})["x" + NULL_REASON], "rows_judged": 0, "rows_skipped": 0,
        "skipped": []}
    assert paths["md"].read_text() == "# md\n"


def test_a_report_given_as_a_mapping_goes_through_its_model(tmp_path: Path) -> None:
    """A caller that still builds a dict gets the same file as one that builds the model, and a key the
    model does not know is refused instead of written."""
    data = {"method": "pairwise", "rows_judged": 0, "rows_skipped": 0, "skipped": []}
    assert (write_report(tmp_path / "a", data)["json"].read_text()
            == write_report(tmp_path / "b", _judge_report())["json"].read_text())
    with pytest.raises(ValidationError, match="surprise"):
        write_report(tmp_path / "c", {**data, "surprise": 1})


def test_no_report_carries_a_credential_an_old_run_folder_still_holds(tmp_path: Path) -> None:
    """A run folder written before redaction may hold `http://user:secret@host` in its config; the writer
    redacts every report it writes, JSON, Markdown and HTML alike."""
    url = "http://ana:s3cret-pass@llm.example/v1?api_key=sk-abcdef123456&x=1"
    paths = write_report(tmp_path, _judge_report(dataset=url), markdown=f"endpoint {url}\n", html=f"<p>{url}</p>")
    for path in paths.values():
        text = path.read_text()
        assert "s3cret" not in text and "sk-abcdef" not in text and "llm.example/v1" in text and "x=1" in text
    assert json.loads(paths["json"].read_text())["dataset"] == "http://***@llm.example/v1?api_key=***&x=1"


def test_undefined_numbers_render_the_same_everywhere() -> None:
    assert cell(None) == cell(float("nan")) == cell(float("inf")) == UNDEFINED
    assert cell(0.12345) == "0.123" and cell(2.0, 1) == "2.0" and cell(7) == "7"


def _tied_run() -> MetaRun:
    agreement = ranking.ranking_agreement({"a": 1.0, "b": 2.0}, {"a": 0.5, "b": 0.5})
    assert math.isnan(agreement.kendall_tau)  # the situation under test: a tied baseline
    detail = {"assessed": 2, "usable": 2, "unparseable": 0, "failed": 0, "with_gold": 2, "correct": 1, "value": 0.5}
    return MetaRun(config=MetaConfig(evaluators=["a", "b"]), items=[], assessments=[],
                   baseline={"metric": "accuracy", "scores": {"a": 0.5, "b": 0.5}, "detail": {"a": detail, "b": detail}},
                   rankings={"matches": 0, "players": ["a", "b"], "agreement": {"elo": agreement.to_dict()}},
                   counts={"planned": 0, "judgments": 0, "usable": 0, "unparseable": 0, "failed": 0,
                           "rule_violations": 0, "outcomes": {}})


def test_meta_report_with_tied_baseline_is_strict_json(tmp_path: Path) -> None:
    paths = write_reports(_tied_run(), tmp_path)
    report = strict_load(paths["json"])
    elo = report["rankings"]["agreement"]["elo"]
    assert elo["kendall_tau"] is None and elo["kendall_tau" + NULL_REASON]
    assert elo["spearman_rho"] is None and elo["spearman_rho" + NULL_REASON]
    assert f"| elo | {UNDEFINED} | {UNDEFINED} |" in to_markdown(meta_report(_tied_run()))


def test_meta_run_end_to_end_with_tied_baseline(tmp_path: Path) -> None:
    """Two evaluators that agree on every item have the same accuracy: the baseline ranking is one tie."""
    items = [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Say {i}.", output_1=f"{i}.", output_2="No.",
                      gold_label="Answer1" if i % 3 else "Answer2") for i in range(6)]
    imported = [Assessment(item_id=i.id, evaluator=e, decision="Answer1", explanation="x", source="imported")
                for i in items for e in ("x", "y")]
    settings = Settings(endpoints={"meta": EndpointSpec(provider="simulated", model="sim-rel0.9")},
                        roles={"meta_judge": "meta"})
    cfg = MetaConfig(evaluators=["x", "y"], bootstrap=20, shuffles=10)
    run = asyncio.run(run_meta(items, cfg, settings, tmp_path, imported=imported))
    assert run.baseline["scores"]["x"] == run.baseline["scores"]["y"]
    report = strict_load(write_reports(run, tmp_path)["json"])
    for name, agreement in report["rankings"].get("agreement", {}).items():
        assert agreement["kendall_tau"] is None, name
        assert agreement["kendall_tau" + NULL_REASON], name


def test_judge_report_and_judgments_are_strict(tmp_path: Path) -> None:
    records = [{"id": "r1", "score": 3.0, "human": 2.0}, {"id": "r2", "score": 3.0, "human": 4.0},
               {"id": "r3", "score": 3.0, "human": 5.0, "extra": float("nan")}]
    report = judging_report("geval", records, [], {"dataset": "d"})
    paths = write_outputs(tmp_path, records, report)
    body = strict_load(paths["report_json"])
    sample = body["single"]["correlation_with_human"]["judge"]["sample"]
    assert sample["pearson"] is None and sample["pearson" + NULL_REASON]  # constant judge scores
    lines = paths["judgments"].read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[2], parse_constant=lambda c: pytest.fail(c))["extra"] is None
    assert UNDEFINED in paths["report_md"].read_text(encoding="utf-8")
