"""Reports of large runs stay bounded: report.html of a 3,000-unit run is about the size of a 300-unit run's,
the incorrect units are a seeded sample that says "N of M shown", the cluster table shows the worst
clusters, and provenance.graphml is skipped (and the reports say so) above its node limit.

The runs are written straight through the record writers (no model calls), so the test is quick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.reporting import graph_limit
from examiner.cli.main import main
from examiner.core.records import (
    AnswerRecord,
    ClusterRecord,
    ClusterRound,
    QuestionRecord,
    RunInfo,
    SourceRef,
    UnitOutcome,
    UnitRecord,
    VerdictRecord,
)
from examiner.core.rundir import PROVENANCE, RunDir
from examiner.exam.runner import build_reports
from examiner.reporting.markdown import PER_CLUSTER_ROWS
from examiner.reporting.summary import INCORRECT_SAMPLE

CLUSTER_SIZE = 10


def write_large_run(path: Path, n_units: int) -> Path:
    """One target, one round: clusters of CLUSTER_SIZE units, one question per cluster, every third unit
    wrong (so every run here has more incorrect units than the reports show)."""
    store = RunDir(path)
    store.write_info(RunInfo(run_id=f"large-{n_units}", status="completed", targets=["alpha"], corpus_paths=[],
                             documents=1, passages=n_units, units=n_units))
    units = [UnitRecord(id=f"u{i:06d}", text=f"Fact number {i} says that item {i} weighs {i % 97} grams.",
                        sources=[SourceRef(document="facts.txt", passage_id=f"p{i:06d}", start=60 * i,
                                           end=60 * i + 50)], token_count=12)
             for i in range(n_units)]
    store.append_records(UnitRecord, units, repair=False)
    clusters, questions, answers, verdicts, outcomes = [], [], [], [], []
    for c in range(0, n_units, CLUSTER_SIZE):
        members = [u.id for u in units[c:c + CLUSTER_SIZE]]
        cid, qid, aid = f"c{c:06d}", f"q{c:06d}", f"a{c:06d}"
        clusters.append(ClusterRecord(id=cid, center=members[0], members=members))
        questions.append(QuestionRecord(id=qid, round=1, target="alpha", cluster_id=cid, text=f"What weighs {c}?",
                                        targets=members, qtype="what"))
        answers.append(AnswerRecord(id=aid, question_id=qid, round=1, target="alpha", text=f"Item {c} weighs a lot."))
        for uid in members:
            wrong = int(uid[1:]) % 3 == 0
            vid = f"v-{uid}"
            verdicts.append(VerdictRecord(id=vid, answer_id=aid, question_id=qid, unit_id=uid, round=1,
                                          target="alpha", type="incorrect" if wrong else "correct",
                                          reason="The reference gives another weight." if wrong else ""))
            outcomes.append(UnitOutcome(unit_id=uid, target="alpha", status="incorrect" if wrong else "correct",
                                        verdict_id=vid, times_targeted=1, covered_round=1, cluster_id=cid))
    store.write_clusters(ClusterRound(round=1, target="alpha", k=len(clusters), clusters=clusters,
                                      projection={u.id: (float(i % 50), float(i // 50)) for i, u in enumerate(units)}))
    for model, rows in ((QuestionRecord, questions), (AnswerRecord, answers), (VerdictRecord, verdicts),
                        (UnitOutcome, outcomes)):
        store.append_records(model, rows, repair=False)
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Path]]:
    root = tmp_path_factory.mktemp("large")
    return {n: build_reports(write_large_run(root / f"run-{n}", n)) for n in (300, 3000)}


def test_html_does_not_grow_with_the_units(built: dict[int, dict[str, Path]]) -> None:
    small, large = (built[n]["html"].stat().st_size for n in (300, 3000))
    assert large < 1.5 * small, (small, large)  # ten times the units, about the same page
    assert large < 1_000_000


def test_incorrect_units_are_a_sample_that_says_n_of_m(built: dict[int, dict[str, Path]]) -> None:
    report = json.loads(built[3000]["json"].read_text(encoding="utf-8"))
    alpha = report["targets"]["alpha"]
    assert alpha["counts"]["incorrect"] == 1000
    assert len(alpha["incorrect"]) == INCORRECT_SAMPLE
    assert alpha["incorrect_sample"]["shown"] == INCORRECT_SAMPLE and alpha["incorrect_sample"]["total"] == 1000
    assert len({r["unit_id"] for r in alpha["incorrect"]}) == INCORRECT_SAMPLE
    rounds = [(r["round"], r["unit_id"]) for r in alpha["incorrect"]]
    assert rounds == sorted(rounds)
    for name in ("html", "md"):
        text = built[3000][name].read_text(encoding="utf-8")
        assert f"{INCORRECT_SAMPLE} of 1000 shown" in text and "verdicts.jsonl" in text
        assert "examiner trace RUN_DIR UNIT_ID" in text
    # the same run and seed draw the same sample
    again = build_reports(report["run"]["path"])
    assert json.loads(again["json"].read_text(encoding="utf-8"))["targets"]["alpha"]["incorrect"] == alpha["incorrect"]


def test_cluster_table_shows_the_worst_clusters(built: dict[int, dict[str, Path]]) -> None:
    md = built[3000]["md"].read_text(encoding="utf-8")
    report = json.loads(built[3000]["json"].read_text(encoding="utf-8"))
    alpha = report["targets"]["alpha"]
    assert alpha["per_cluster_total"] == 300 and len(alpha["per_cluster"]) == 300
    assert f"The {PER_CLUSTER_ROWS} worst of 300 clusters" in md
    section = md.split("## Accuracy per cluster", 1)[1].split("## Convergence", 1)[0]
    shown = [line for line in section.splitlines() if line.startswith("| 1 |")]
    assert len(shown) == PER_CLUSTER_ROWS
    worst = min(r["accuracy"] for r in alpha["per_cluster"])
    assert f"{100 * worst:.1f}%" in shown[0]


def test_graphml_is_written_below_the_limit(built: dict[int, dict[str, Path]]) -> None:
    report = json.loads(built[3000]["json"].read_text(encoding="utf-8"))
    assert report["provenance"]["written"] and built[3000]["provenance"].is_file()
    assert report["provenance"]["nodes"] == 1 + 3000 + 3000 + 300 + 300 + 3000  # doc, passages, units, q, a, v


def test_graphml_is_skipped_above_the_limit_and_the_reports_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_large_run(tmp_path / "run", 300)
    assert "provenance" in build_reports(run) and (run / PROVENANCE).is_file()
    monkeypatch.setattr(graph_limit, "GRAPHML_MAX_NODES", 100)
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert not (run / PROVENANCE).exists()  # the older graph no longer matches: removed
    assert "provenance.graphml not written" in out and "over the limit of 100" in out
    plan = json.loads((run / "report.json").read_text(encoding="utf-8"))["provenance"]
    assert plan["written"] is False and plan["nodes"] > 100 and plan["limit"] == 100
    for name in ("report.md", "report.html"):
        assert "provenance.graphml not written" in (run / name).read_text(encoding="utf-8")
