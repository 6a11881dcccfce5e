"""The meta-evaluation pipeline and `examiner meta`: inputs, bad input, resume, individual methods, exam runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

import examiner.simulator.meta_roles  # noqa: F401
from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core.errors import UserError
from examiner.corpus.datasets import FieldMap
from examiner.meta.items import load_items
from examiner.core.assessments import Assessment, MetaItem
from examiner.core.labels import Preference
from examiner.meta.pipeline import MetaConfig, run_meta
from examiner.meta.sections import meta_report, to_html, to_markdown

ENDPOINTS = {
    "e80": {"provider": "simulated", "model": "sim-acc0.8", "max_concurrency": 16},
    "e65": {"provider": "simulated", "model": "sim-acc0.65", "max_concurrency": 16},
    "e50": {"provider": "simulated", "model": "sim-acc0.5", "max_concurrency": 16},
    "meta": {"provider": "simulated", "model": "sim-rel0.9", "max_concurrency": 16},
}


def settings() -> Settings:
    return Settings(endpoints={k: EndpointSpec(**v) for k, v in ENDPOINTS.items()}, roles={"meta_judge": "meta"})


def pair_items(n: int) -> list[MetaItem]:
    return [MetaItem(id=f"p{i}", kind="pairwise", instruction=f"Summarise fact {i}.", output_1=f"Fact {i} holds.",
                     output_2=f"Something else about {i}.", gold_label="Answer2" if i % 2 else "Answer1")
            for i in range(n)]


def scored_items(n: int) -> list[MetaItem]:
    return [MetaItem(id=f"s{i}", kind="individual", instruction="Rate this summary.", text=f"Summary number {i}.",
                     gold_score=float(1 + i % 5)) for i in range(n)]


def test_fewer_than_two_evaluators_is_refused(tmp_path: Path):
    with pytest.raises(UserError, match="at least two"):
        asyncio.run(run_meta(pair_items(2), MetaConfig(evaluators=["e80", "e80"]), settings(), tmp_path))
    with pytest.raises(UserError, match="jdeval-i or bsmeval"):
        asyncio.run(run_meta(scored_items(2), MetaConfig(evaluators=["e80", "e50"]), settings(), tmp_path))


def test_evaluator_missing_items_is_reported_and_the_rest_kept(tmp_path: Path):
    items = pair_items(10)
    imported = [Assessment(item_id=f"p{i}", evaluator="outside", decision="Answer1", explanation="x", source="imported")
                for i in range(6)]  # the imported evaluator misses p6..p9
    cfg = MetaConfig(evaluators=["e80", "e65", "outside"], bootstrap=50)
    run = asyncio.run(run_meta(items, cfg, settings(), tmp_path, imported=imported))
    assert any("outside" in p and "4 of 10" in p and "4 missing" in p for p in run.problems)
    # items without it still get their pairs (e80 vs e65 only); items with it get all three pairs
    per_item = {i.id: sum(j.item_id == i.id for j in run.judgments) for i in items}
    assert all(per_item[f"p{i}"] == 3 for i in range(6))
    assert all(per_item[f"p{i}"] == 3 for i in range(6, 10))  # three draws of the only pair
    assert all("outside" not in (j.assistant_1, j.assistant_2) for j in run.judgments if j.item_id in ("p6", "p9"))
    assert run.baseline["detail"]["outside"]["assessed"] == 6


def test_second_run_resumes_without_new_calls(tmp_path: Path):
    cfg = MetaConfig(evaluators=["e80", "e65", "e50"], bootstrap=50)
    first = asyncio.run(run_meta(pair_items(12), cfg, settings(), tmp_path))
    assert first.usage["calls"] == 12 * 3 + 12 * 3
    second = asyncio.run(run_meta(pair_items(12), cfg, settings(), tmp_path))
    assert second.usage["calls"] == 0 and second.usage["cache_hits"] == 0  # read from the JSONL records
    assert second.rankings["elo"] == first.rankings["elo"]
    # a longer list only costs the new items
    third = asyncio.run(run_meta(pair_items(14), cfg, settings(), tmp_path))
    assert third.usage["calls"] == 2 * 3 + 2 * 3


def test_jdeval_i_on_scored_items_has_pearson_baseline(tmp_path: Path):
    cfg = MetaConfig(evaluators=["e80", "e50"], method="jdeval-i", bootstrap=50)
    run = asyncio.run(run_meta(scored_items(30), cfg, settings(), tmp_path))
    assert run.baseline["metric"] == "pearson"
    assert set(run.rankings["mean_scores"]) == {"e80", "e50"}
    assert all(1 <= j.score <= 5 and j.own_decision for j in run.individual)
    assert run.counts["usable"] == 60


def test_bsmeval_records_at_most_five_branches(tmp_path: Path):
    cfg = MetaConfig(evaluators=["e80", "e50"], method="bsmeval", bootstrap=50)
    run = asyncio.run(run_meta(pair_items(10), cfg, settings(), tmp_path))
    assert run.individual and all(1 <= len(j.branches) <= 5 for j in run.individual)
    assert all(len(j.branch_scores) == len(j.branches) for j in run.individual)
    assert all(j.score == pytest.approx(sum(j.branch_scores) / len(j.branch_scores)) for j in run.individual)
    assert "top_branches" in run.counts
    report = meta_report(run)
    assert "<img alt='win-rate heatmap' src='data:image/png;base64," in to_html(report)
    assert "| e80 |" in to_markdown(report)


def test_field_mapping(tmp_path: Path):
    path = tmp_path / "prefs.jsonl"
    rows = [{"uid": "a", "prompt": "Say hi", "resp_a": "hi", "resp_b": "bye", "pref": 1},
            {"uid": "b", "prompt": "Say no", "resp_a": "yes", "resp_b": "no", "pref": 0}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    fm = FieldMap(id="uid", instruction="prompt", output_1="resp_a", output_2="resp_b", label="pref")
    items, skipped = load_items(str(path), fm)
    assert not skipped
    assert [(i.id, i.kind, i.gold_label, i.output_2) for i in items] == [("a", "pairwise", Preference.FIRST, "bye"),
                                                                          ("b", "pairwise", Preference.TIE, "no")]
    with pytest.raises(UserError, match="field-mapping"):
        load_items(str(path))


def _write_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"endpoints": ENDPOINTS, "roles": {"meta_judge": "meta"}}))
    return cfg


def test_cli_jsonl_mdeval_writes_reports(tmp_path: Path, capsys):
    data = tmp_path / "items.jsonl"
    data.write_text("\n".join(json.dumps({"id": i.id, "input": i.instruction, "output_1": i.output_1,
                                          "output_2": i.output_2, "label": 1 if i.gold_label is Preference.FIRST else 2})
                              for i in pair_items(6)) + "\n")
    out = tmp_path / "run"
    rc = main(["meta", str(data), "--config", str(_write_config(tmp_path)), "--evaluators", "e80,e65,e50",
               "--method", "mdeval", "--meta-judge", "meta", "--out", str(out), "--bootstrap", "50", "--shuffles", "20"])
    assert rc == 0
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["method"] == "mdeval" and report["rankings"]["matches"] == 18
    assert len(report["debates"]) == 18
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "<details>" in html


def test_cli_bad_records_are_named_skipped_and_counted(tmp_path: Path, capsys):
    """One loader, one policy: bad records do not stop the run; each is named and the run says how many."""
    good = [{"id": i.id, "input": i.instruction, "output_1": i.output_1, "output_2": i.output_2, "label": 1}
            for i in pair_items(4)]
    rows = [json.dumps(r) for r in good] + [
        "{broken",                                                                    # row 5
        json.dumps({"id": "x1", "input": "q", "output_1": "a", "output_2": "b", "label": 7}),  # row 6
        json.dumps({"id": "x2", "input": "q", "answer": "a"}),                         # row 7: no outputs
        json.dumps(good[0]),                                                          # row 8: repeated id
    ]
    data = tmp_path / "items.jsonl"
    data.write_text("\n".join(rows) + "\n")
    imported = tmp_path / "ready.jsonl"
    imported.write_text(json.dumps({"item_id": "p0", "evaluator": "outside", "decision": "maybe"}) + "\n")
    out = tmp_path / "run"
    rc = main(["meta", str(data), "--config", str(_write_config(tmp_path)), "--evaluators", "e80,e50",
               "--assessments", str(imported), "--out", str(out), "--bootstrap", "20", "--shuffles", "10"])
    assert rc == 0
    err = capsys.readouterr().err
    assert "row 5: not valid JSON" in err and "row 6: field 'label' must be 0, 1 or 2, got 7" in err
    assert "row 7: has neither" in err and "row 8: duplicate id 'p0'" in err
    assert "assessments file row 1: not an assessment record" in err
    report = json.loads((out / "report.json").read_text())
    assert report["items"] == 4 and report["items_skipped"] == 5
    assert [s["line"] for s in report["skipped"]] == [5, 6, 7, 8, 1]
    assert report["problems"][0].startswith("5 input record(s) could not be used and were skipped")


@pytest.mark.usefixtures("fixture_data")
def test_cli_bad_input_messages(tmp_path: Path, capsys):
    cfg = str(_write_config(tmp_path))
    assert main(["meta", "llmbar:Natural", "--config", cfg, "--evaluators", "e80", "--out", str(tmp_path / "x")]) == 2
    assert "at least two" in capsys.readouterr().err
    assert main(["meta", str(tmp_path / "nope.jsonl"), "--config", cfg, "--evaluators", "e80,e50",
                 "--out", str(tmp_path / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["meta", "llmbar:Natural", "--config", cfg, "--evaluators", "e80,typo", "--limit", "2",
                 "--out", str(tmp_path / "x")]) == 2
    assert "unknown endpoint 'typo'" in capsys.readouterr().err


def _exam_fixture(run_dir: Path) -> None:
    """A hand-made exam run directory: 3 units, 2 questions, 2 answers with claim markers, 5 verdicts."""
    run_dir.mkdir()
    units = [{"id": f"u{i}", "text": f"Unit {i} says the river is {i} km long.", "token_count": 10,
              "sources": [{"document": "d", "passage_id": "p", "start": 0, "end": 10}]} for i in range(3)]
    questions = [{"id": f"q{k}", "round": 1, "target": "cand", "cluster_id": "c0", "text": f"How long is river {k}?",
                  "targets": ["u0", "u1", "u2"]} for k in range(2)]
    answers = [{"id": "a0", "question_id": "q0", "round": 1, "target": "cand", "text": "It is long (u0:known) (u1:wrong)."},
               {"id": "a1", "question_id": "q1", "round": 1, "target": "cand", "text": "Not sure (u2:known)."}]
    verdicts = [{"id": f"v{n}", "answer_id": a, "question_id": q, "unit_id": u, "round": 1, "target": "cand",
                 "type": t, "reason": "because"}
                for n, (a, q, u, t) in enumerate([("a0", "q0", "u0", "correct"), ("a0", "q0", "u1", "correct"),
                                                   ("a0", "q0", "u2", "unrelated"), ("a1", "q1", "u2", "correct"),
                                                   ("a1", "q1", "u0", "unparseable")])]
    for name, rows in (("units", units), ("questions", questions), ("answers", answers), ("verdicts", verdicts)):
        (run_dir / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_cli_meta_on_exam_run(tmp_path: Path):
    run_dir = tmp_path / "exam"
    _exam_fixture(run_dir)
    out = tmp_path / "meta"
    rc = main(["meta", "--exam", str(run_dir), "--config", str(_write_config(tmp_path)), "--evaluators", "e80,e50",
               "--meta-judge", "meta", "--out", str(out), "--bootstrap", "50", "--shuffles", "20"])
    assert rc == 0
    report = json.loads((out / "report.json").read_text())
    assert report["item_kind"] == "verdict" and report["items"] == 5
    assert "exam-judge" in report["config"]["evaluators"]
    assert any("exam-judge" in p and "1 unparseable" in p for p in report["problems"])
    assessments = [json.loads(line) for line in (out / "assessments.jsonl").read_text().splitlines()]
    assert {a["evaluator"] for a in assessments} == {"e80", "e50", "exam-judge"}
    assert {a["decision"] for a in assessments if a["evaluator"] == "e80"} <= {"correct", "incorrect", "unrelated"}
    assert report["rankings"]["matches"] > 0


def test_no_judgment_is_unscored_in_memory_and_a_reason_on_disk() -> None:
    from examiner.core.assessments import Assessment, MetaJudgment
    from examiner.core.labels import Unscored, call_failed

    failed = Assessment(item_id="i", evaluator="e", unscored=call_failed("timeout"))
    assert isinstance(failed.unscored, Unscored) and failed.status == "failed" and not failed.ok
    on_disk = failed.model_dump(mode="json")
    assert on_disk["unscored"] == "failed: timeout" and on_disk["decision"] is None and "status" not in on_disk
    assert Assessment.model_validate(on_disk).status == "failed"
    assert Assessment(item_id="i", evaluator="e", decision="Answer1").model_dump(mode="json")["unscored"] is None
    # files written before: status + error, read through the converter
    old = MetaJudgment.model_validate({"id": "j", "method": "jdeval", "item_id": "i", "draw": 0, "assistant_1": "a",
                                       "assistant_2": "b", "status": "unparseable", "error": "no tags"})
    assert old.unscored == Unscored("no tags") and old.status == "unparseable"
    assert Assessment.model_validate({"item_id": "i", "evaluator": "e", "status": "failed", "error": "boom"}).status == "failed"
    assert Assessment.model_validate({"item_id": "i", "evaluator": "e", "status": "ok"}).ok
