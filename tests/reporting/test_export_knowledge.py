"""Every export format carries the judged `abstained` label and the control questions, the controls marked
as such and never among the verdicts: a simulated exam whose target declines about the units it does not
know (known truth) and meets control questions by what it knows, exported as JSONL, Parquet, a Hugging Face
folder, an Inspect eval log and OpenTelemetry spans."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core.control_records import ControlRecord
from examiner.core.records import VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.reporting.export_controls import CONTROL_COLUMNS
from tests.helpers.simulated_exam import ROLES

DECLINING = {"known": 0.5, "wrong": 0.2, "declined": 0.3}


@pytest.fixture(scope="module")
def run(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("knowledge_export") / "run"
    endpoints = {"sim": EndpointSpec(provider="simulated", model="sim-sim", max_concurrency=16,
                                     options={"knowledge": DECLINING, "false_premise": "knowledge"})}
    settings = Settings(endpoints=endpoints, roles={r: "sim" for r in ROLES},
                        exam={"max_rounds": 1, "control_share": 1.0, "self_check_share": 0.0})
    asyncio.run(start_exam(settings, ExamRequest([str(small_corpus)], targets=["sim"]), folder, quiet=True))
    return folder


def _controls(run: Path) -> dict[str, ControlRecord]:
    return RunDir(run).records(ControlRecord)


def _check_rows(rows: list[dict[str, Any]], run: Path) -> None:
    verdicts = RunDir(run).records(VerdictRecord)
    controls = _controls(run)
    assert len(controls) >= 2 and {c.label for c in controls.values()} == {"declined_or_corrected", "accepted_premise"}
    exam, marked = [r for r in rows if not r["control"]], [r for r in rows if r["control"]]
    assert all(set(name for name, _ in CONTROL_COLUMNS) <= set(r) for r in rows)
    assert all(r["control_kind"] is r["control_label"] is r["control_premise"] is None for r in exam)
    abstained = [r for r in exam if r["verdict"] == "abstained"]
    assert abstained and len(abstained) == sum(v.verdict == "abstained" for v in verdicts.values())
    assert all(r["judge_label"] == r["final_label"] == "abstained" for r in abstained)
    # one row per (control, target), with the judge's control label and no verdict of the exam's vocabulary
    assert sorted(r["question_id"] for r in marked) == sorted(controls)
    for r in marked:
        c = controls[r["question_id"]]
        assert (r["control_kind"], r["control_premise"], r["control_label"]) == (c.kind, c.premise, c.label)
        assert (r["question_text"], r["answer_text"], r["question_kind"]) == (c.text, c.answer, "control")
        assert r["verdict"] is r["verdict_id"] is r["unit_id"] is r["judge_label"] is r["final_label"] is None
        assert r["sources"] and r["document"] == r["sources"][0]["document"]


def test_dataset_rows_carry_abstained_and_marked_controls(run: Path, tmp_path: Path) -> None:
    assert main(["export", str(run), "--to", "jsonl", str(tmp_path / "jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "jsonl" / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    _check_rows(rows, run)
    card = (tmp_path / "jsonl" / "README.md").read_text(encoding="utf-8")
    labels = Counter(c.label for c in _controls(run).values())
    assert (f"control questions (rows marked `control`, never counted in accuracy): {sum(labels.values())}; labels: "
            f"accepted_premise {labels['accepted_premise']}, declined_or_corrected {labels['declined_or_corrected']}"
            in card)
    verdicts = Counter(r["verdict"] or "unscored" for r in rows if not r["control"])
    assert f"abstained {verdicts['abstained']}" in card and "| control | boolean |" in card


def test_parquet_and_hf_carry_the_same_rows(run: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    datasets = pytest.importorskip("datasets")
    assert main(["export", str(run), "--to", "parquet", str(tmp_path / "pq")]) == 0
    _check_rows(pq.read_table(tmp_path / "pq" / "data.parquet").to_pylist(), run)
    assert main(["export", str(run), "--to", "hf", str(tmp_path / "hf")]) == 0
    _check_rows(list(datasets.load_from_disk(str(tmp_path / "hf"))), run)


def test_inspect_log_scores_controls_apart_and_gives_the_rates(run: Path, tmp_path: Path) -> None:
    log_module = pytest.importorskip("inspect_ai.log")
    assert main(["export", str(run), "--to", "inspect", "--out", str(tmp_path / "log.json")]) == 0
    log = log_module.read_eval_log(str(tmp_path / "log.json"))
    controls = _controls(run)
    assert log.samples is not None
    marked = [s for s in log.samples if s.metadata.get("control")]
    assert sorted(str(s.id) for s in marked) == sorted(controls)
    for s in marked:
        c = controls[str(s.id)]
        assert s.scores is not None and s.scores["control"].value == (1.0 if c.label == "declined_or_corrected" else 0.0)
        assert "units" not in s.scores and s.metadata["control_kind"] == c.kind
    exam = [s for s in log.samples if not s.metadata.get("control")]
    declined = [s for s in exam if s.scores and "abstained" in s.scores["units"].value.values()]
    assert declined and all("abstained" in s.scores["question"].explanation for s in declined)
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    knowledge = report["knowledge"]["sim"]
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    for key in ("abstention_rate", "hallucination_rate"):
        assert metrics[key].value == pytest.approx(knowledge["overall"][key]["value"])
        assert metrics[key].metadata["low"] == pytest.approx(knowledge["overall"][key]["low"])
    assert metrics["control_refusal_rate"].value == pytest.approx(knowledge["controls"]["refusal_rate"]["value"])
    assert metrics["control_false_premise_acceptance"].value == pytest.approx(
        knowledge["controls"]["false_premise_acceptance"]["value"])
    assert metrics["accuracy"].value == pytest.approx(report["targets"]["sim"]["accuracy"]["value"])
    assert log.results.scores[0].scored_samples + log.results.scores[0].unscored_samples == len(exam)


def test_otel_events_score_abstained_and_mark_controls(run: Path, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    path = tmp_path / "spans.json"
    assert main(["export", str(run), "--to", "otel", str(path)]) == 0
    from examiner.reporting.otlp_json import plain_attributes, spans_of

    events = [plain_attributes(e.get("attributes")) for span in spans_of(json.loads(path.read_text(encoding="utf-8")))
              for e in span.get("events", [])]
    verdicts = RunDir(run).records(VerdictRecord)
    controls = _controls(run)
    unit_events = [e for e in events if e["gen_ai.evaluation.name"] == "examiner.unit_verdict"]
    control_events = [e for e in events if e["gen_ai.evaluation.name"] == "examiner.control_verdict"]
    assert len(unit_events) == len(verdicts) and not any(e.get("examiner.control") for e in unit_events)
    abstained = [e for e in unit_events if e["gen_ai.evaluation.score.label"] == "abstained"]
    assert abstained and all(e["gen_ai.evaluation.score.value"] == 0.0 for e in abstained)
    assert sorted(e["examiner.control_id"] for e in control_events) == sorted(controls)
    for e in control_events:
        c = controls[e["examiner.control_id"]]
        assert e["examiner.control"] is True and e["gen_ai.evaluation.score.label"] == c.label
        assert e["gen_ai.evaluation.score.value"] == (1.0 if c.label == "declined_or_corrected" else 0.0)
