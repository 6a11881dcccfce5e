"""The judged `abstained` label end to end on the simulated backend: a candidate that declines about the
units it does not know gets those units labelled `abstained` by the judge (from the answer, not a phrase
list), they end covered with status `abstained`, and the report counts them apart from incorrect ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.core.config import Settings
from examiner.core.labels import COVERING, Verdict, verdict_from_text
from examiner.core.records import AnswerRecord, VerdictRecord
from examiner.exam.run_writer import RunStore
from examiner.exam.runner import ExamRequest, start_exam
from examiner.reporting import build_report
from examiner.simulator import unit_category
from tests.helpers.markdown_tables import ragged_tables
from tests.helpers.simulated_exam import outcomes_of, sim_settings

DECLINING = {"known": 0.5, "wrong": 0.2, "declined": 0.3}


def _declining(settings: Settings) -> Settings:
    for spec in settings.endpoints.values():
        spec.options["knowledge"] = DECLINING
    return settings


def test_abstained_is_a_verdict_that_covers() -> None:
    assert verdict_from_text(" Abstained ") is Verdict.ABSTAINED
    assert Verdict.ABSTAINED in COVERING
    record = VerdictRecord(id="v", answer_id="a", question_id="q", unit_id="u", round=1, target="t",
                           verdict="abstained", reason="")
    assert record.mark().label is Verdict.ABSTAINED
    assert json.loads(record.model_dump_json())["verdict"] == "abstained"


async def test_declined_units_end_abstained_and_are_counted_apart(small_corpus: Path, tmp_path: Path) -> None:
    info = await start_exam(_declining(sim_settings(max_rounds=3)), ExamRequest([str(small_corpus)], targets=["sim"]),
                            tmp_path, quiet=True, report=False)
    assert info.status == "completed"
    outcomes = list(outcomes_of(tmp_path).values())
    truth = {o.unit_id: unit_category(0, "sim", o.unit_id, DECLINING) for o in outcomes}
    expected = {"known": "correct", "wrong": "incorrect", "declined": "abstained"}
    covered = [o for o in outcomes if o.status in COVERING]
    assert sum(o.status == "abstained" for o in covered) >= 5
    assert all(o.status == expected[truth[o.unit_id]] for o in covered)
    verdicts = RunStore(tmp_path).all(VerdictRecord).values()
    assert {v.verdict for v in verdicts if truth[v.unit_id] == "declined"} == {"abstained"}

    report = json.loads(build_report(tmp_path)["json"].read_text(encoding="utf-8"))
    counts = report["targets"]["sim"]["counts"]
    assert counts["abstained"] == sum(o.status == "abstained" for o in outcomes)
    # Accuracy counts a declined unit as not known: correct among every covered unit.
    accuracy = report["targets"]["sim"]["accuracy"]
    assert accuracy["den"] == counts["correct"] + counts["incorrect"] + counts["abstained"]
    assert "abstained" in (tmp_path / "report.md").read_text(encoding="utf-8")


async def test_report_knowledge_section_per_target_and_topic(small_corpus: Path, tmp_path: Path) -> None:
    """A declining target stating a calibrated confidence: the knowledge section's rates are the outcome
    counts' shares, each with an interval around it, ECE near 0, and report.html shows the section."""
    settings = _declining(sim_settings(max_rounds=2))
    for spec in settings.endpoints.values():
        spec.options["stated_confidence"] = "calibrated"
    await start_exam(settings, ExamRequest([str(small_corpus)], targets=["sim"]), tmp_path, quiet=True, report=False)
    answers = [a for a in RunStore(tmp_path).all(AnswerRecord).values()]
    assert answers and all(a.stated_confidence is not None and "Confidence:" not in a.text for a in answers)
    paths = build_report(tmp_path)
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    k = report["knowledge"]["sim"]["overall"]
    counts = report["targets"]["sim"]["counts"]
    assert (k["correct"], k["incorrect"], k["abstained"]) == (counts["correct"], counts["incorrect"],
                                                              counts["abstained"])
    assert k["hallucination_rate"]["value"] == pytest.approx(k["incorrect"] / (k["correct"] + k["incorrect"]))
    assert k["abstention_rate"]["value"] == pytest.approx(k["abstained"] / k["asked"])
    for name in ("accuracy", "hallucination_rate", "abstention_rate", "correct_given_attempted"):
        assert k[name]["low"] <= k[name]["value"] <= k[name]["high"], name
    assert k["confidence_source"] == "stated" and k["ece"] < 0.05
    # F, the penalised scores, ECE, Brier and AURC each with its cluster interval, per target and per topic
    shown = {"f_score": k["simpleqa_f"], "ece": k["ece"], "brier": k["brier"], "aurc": k["aurc"],
             **{f"penalised_{t}": v for t, v in k["penalised"].items()}}
    assert set(k["intervals"]) == set(shown)
    for name, value in shown.items():
        est = k["intervals"][name]
        assert est["value"] == pytest.approx(value) and est["low"] <= value <= est["high"], name
        assert est["groups"] >= 2 and est["method"], name
    assert all("f_score" in r["intervals"] for r in report["knowledge"]["sim"]["topics"])
    assert {r["by"] for r in report["knowledge"]["sim"]["topics"]} == {"cluster", "document", "language"}
    assert not ragged_tables(paths["md"].read_text(encoding="utf-8"))
    html = paths["html"].read_text(encoding="utf-8")
    assert "What each target knows, invents and declines" in html and "knowledge map" in html
    assert "figure:reliability" in paths and "figure:knowledge_map" in paths


async def test_token_confidence_is_recorded_when_the_exam_asks_for_logprobs(small_corpus: Path, tmp_path: Path) -> None:
    """exam.answer_logprobs: every answer carries exp(mean token logprob) from the endpoint's logprobs, and
    without a stated confidence the knowledge figures read that one."""
    from examiner.reporting.knowledge import knowledge_row
    from examiner.reporting.run_reader import load_run

    settings = _declining(sim_settings(max_rounds=1, answer_logprobs=True))
    await start_exam(settings, ExamRequest([str(small_corpus)], targets=["sim"]), tmp_path, quiet=True, report=False)
    answers = list(RunStore(tmp_path).all(AnswerRecord).values())
    assert answers and all(a.token_confidence is not None and 0 < a.token_confidence < 1 for a in answers)
    assert all(a.stated_confidence is None for a in answers)
    run = load_run(tmp_path)
    row = knowledge_row(run, list(run.outcomes["sim"].values()), by="target", key="sim", topic="sim")
    assert row["confidence_source"] == "token" and row["ece"] is not None and row["brier"] is not None


@pytest.mark.parametrize("logprobs", [True, False], ids=["logprobs", "samples"])
async def test_geval_labels_declined_units_abstained(small_corpus: Path, tmp_path: Path, logprobs: bool) -> None:
    """G-Eval's form has 0 beside its 1-5 scale for an answer that declines: the simulated judge fills 0 for a
    declined unit, and the exam labels it abstained from the probability on 0 (both scoring paths), never
    averaged into the agreement scale."""
    from examiner.judging.exam_judges import label_from_form
    from examiner.agents.judge.geval_math import GEvalScore

    settings = _declining(sim_settings(max_rounds=1))
    settings.endpoints.update({name: spec.model_copy(update={"supports_logprobs": logprobs})
                               for name, spec in settings.endpoints.items()})
    settings.roles["geval"] = "sim"  # G-Eval's calls go to the simulated judge, not the embedded model
    await start_exam(settings, ExamRequest([str(small_corpus)], targets=["sim"], judge_mode="geval"), tmp_path,
                     quiet=True, report=False)
    outcomes = list(outcomes_of(tmp_path).values())
    truth = {o.unit_id: unit_category(0, "sim", o.unit_id, DECLINING) for o in outcomes}
    verdicts = [v for v in RunStore(tmp_path).all(VerdictRecord).values() if v.verdict != "unscored"]
    declined = [v for v in verdicts if truth[v.unit_id] == "declined"]
    assert declined and {v.verdict for v in declined} == {"abstained"}
    assert all("declines" in v.reason for v in declined)
    assert all(v.reason.endswith("via logprobs" if logprobs else "via samples") for v in verdicts)
    assert "abstained" not in {v.verdict for v in verdicts if truth[v.unit_id] != "declined"}
    # mass on 0 below one half: the 1-5 expectation without it decides
    assert label_from_form(GEvalScore(2.0, "logprobs", {0: 0.4, 5: 0.6})) == (Verdict.CORRECT, 5.0)
    assert label_from_form(GEvalScore(0.5, "samples", {0: 0.5, 1: 0.5}))[0] is Verdict.ABSTAINED
