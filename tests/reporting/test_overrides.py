"""People's overrides of exam verdicts without a browser: the overrides.jsonl store, the report's
recompute of accuracy and coverage, the review page's rows and server checks, and the overrides as
human labels (the judge's agreement, Cohen's kappa, confusion).

The run is the hand-written sample of tests.helpers.sample_run: alpha 10 correct, 2 incorrect of 12 units
(units 3 and 7 unrelated in round 1, covered in round 2); beta 6 correct, 4 incorrect, 2 unanswered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from pydantic import ValidationError

from examiner.cli.main import main
from examiner.core.jsonl import CorruptRunFile
from examiner.core.overrides import OverrideRecord, utc_now
from examiner.core.records import VerdictRecord
from examiner.core.rundir import OVERRIDES, VERDICTS, RunDir
from examiner.core.runlock import hold_run_dir
from examiner.reporting import build_report, load_run
from examiner.reporting.with_overrides import apply_overrides, human_agreement, overrides_summary
from examiner.reporting.review import filtered, review_rows
from examiner.reporting.summary import target_scores
from examiner.reporting.view_server import ReviewServer
from examiner.stats.correlation import cohen_kappa


@pytest.fixture()
def run_dir(sample_run_copy: Path) -> Path:
    """A fresh copy of the sample run (tests/conftest.py) for each test."""
    return sample_run_copy


def _verdict(run_dir: Path, target: str, *, kind: str, covering: bool = True) -> VerdictRecord:
    """A verdict of `target` of type `kind`; covering=True picks one that covers its unit (the outcome's)."""
    run = load_run(run_dir)
    covering_ids = {o.verdict_id for o in run.outcomes[target].values()}
    return next(v for v in sorted(run.verdicts.values(), key=lambda v: v.id)
                if v.target == target and v.verdict == kind and (v.id in covering_ids) == covering)


def _override(run_dir: Path, verdict: VerdictRecord, new: str, reason: str = "checked the source",
              who: str = "ana") -> None:
    RunDir(run_dir).append_override(OverrideRecord(question_id=verdict.question_id, unit_id=verdict.unit_id,
                                                   verdict_before=verdict.verdict, verdict=new, reason=reason, who=who, at=utc_now()))


# --- the store --------------------------------------------------------------------------------------------

def test_latest_override_per_question_and_unit_wins_and_verdicts_never_change(run_dir: Path) -> None:
    before = (run_dir / VERDICTS).read_bytes()
    v = _verdict(run_dir, "alpha", kind="correct")
    _override(run_dir, v, "incorrect", "date is wrong", "ana")
    _override(run_dir, v, "unrelated", "second look", "bo")
    rows = RunDir(run_dir).read_overrides()
    assert [r.verdict for r in rows] == ["incorrect", "unrelated"]
    current = RunDir(run_dir).current_overrides()
    assert list(current) == [(v.question_id, v.unit_id)]
    assert current[(v.question_id, v.unit_id)].who == "bo"
    assert current[(v.question_id, v.unit_id)].at.endswith("Z")
    assert (run_dir / VERDICTS).read_bytes() == before
    line = json.loads((run_dir / OVERRIDES).read_text(encoding="utf-8").splitlines()[0])
    assert set(line) == {"question_id", "unit_id", "verdict_before", "verdict", "reason", "who", "at"}
    assert line["verdict_before"] == "correct"


def test_override_rows_are_validated() -> None:
    fields = dict(question_id="q", unit_id="u", verdict_before="correct", who="ana", at=utc_now())
    with pytest.raises(ValidationError):
        OverrideRecord(verdict="incorrect", reason="   ", **fields)
    with pytest.raises(ValidationError):
        OverrideRecord(verdict="unscored", reason="no", **fields)  # a person always gives a label


def test_torn_last_override_is_tolerated_and_repaired_mid_file_damage_is_an_error(run_dir: Path) -> None:
    v = _verdict(run_dir, "alpha", kind="correct")
    _override(run_dir, v, "incorrect")
    with (run_dir / OVERRIDES).open("a", encoding="utf-8") as handle:
        handle.write('{"question_id": "q", "unit_')  # a writer killed mid-line
    rundir = RunDir(run_dir)
    assert len(rundir.read_overrides()) == 1 and rundir.torn[OVERRIDES] == 1
    _override(run_dir, v, "unrelated")  # the next append cuts the torn tail off first
    assert [r.verdict for r in RunDir(run_dir).read_overrides()] == ["incorrect", "unrelated"]
    assert (run_dir / f"{OVERRIDES}.torn").is_file()
    text = (run_dir / OVERRIDES).read_text(encoding="utf-8").splitlines()
    (run_dir / OVERRIDES).write_text("\n".join([text[0], "garbage", text[1]]) + "\n", encoding="utf-8")
    with pytest.raises(CorruptRunFile, match=f"{OVERRIDES}:2"):
        RunDir(run_dir).read_overrides()


# --- the recompute ------------------------------------------------------------------------------------------

def test_overriding_a_covering_correct_verdict_to_incorrect_lowers_accuracy(run_dir: Path) -> None:
    _override(run_dir, _verdict(run_dir, "alpha", kind="correct"), "incorrect")
    run = load_run(run_dir)
    judged, changed = target_scores(run, "alpha"), target_scores(apply_overrides(run), "alpha")
    assert judged["accuracy"]["value"] == pytest.approx(10 / 12)
    assert changed["accuracy"]["value"] == pytest.approx(9 / 12)
    assert changed["coverage"]["value"] == judged["coverage"]["value"] == pytest.approx(1.0)
    assert target_scores(apply_overrides(run), "beta") == target_scores(run, "beta")  # other target untouched
    assert run.verdicts == load_run(run_dir).verdicts  # the recompute works on a copy


def test_a_person_can_say_abstained_and_the_unit_ends_abstained(run_dir: Path) -> None:
    """The review page's label `abstained` (issue 42): the unit stays covered, ends abstained, and counts
    as not right in accuracy."""
    covering = _verdict(run_dir, "alpha", kind="correct")
    _override(run_dir, covering, "abstained")
    changed = apply_overrides(load_run(run_dir))
    assert changed.outcomes["alpha"][covering.unit_id].status == "abstained"
    scores = target_scores(changed, "alpha")
    assert scores["counts"]["abstained"] == 1
    assert scores["accuracy"]["value"] == pytest.approx(9 / 12)
    assert scores["coverage"]["value"] == pytest.approx(1.0)


def test_overriding_to_unrelated_uncovers_and_an_earlier_unrelated_to_correct_covers(run_dir: Path) -> None:
    covering = _verdict(run_dir, "alpha", kind="correct")
    _override(run_dir, covering, "unrelated")
    run = load_run(run_dir)
    changed = apply_overrides(run)
    assert changed.outcomes["alpha"][covering.unit_id].status == "uncovered"
    assert changed.outcomes["alpha"][covering.unit_id].verdict_id is None
    assert target_scores(changed, "alpha")["coverage"]["value"] == pytest.approx(11 / 12)
    # a late unit: unrelated in round 1, correct in round 2; a person says round 1 already covered it
    early = _verdict(run_dir, "alpha", kind="unrelated", covering=False)
    _override(run_dir, early, "correct")
    outcome = apply_overrides(load_run(run_dir)).outcomes["alpha"][early.unit_id]
    assert (outcome.status, outcome.covered_round, outcome.verdict_id) == ("correct", early.round, early.id)


def test_report_shows_both_figures_and_the_count(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = build_report(run_dir)
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["overrides"] is None
    assert "With people's overrides" not in paths["md"].read_text(encoding="utf-8")
    v = _verdict(run_dir, "alpha", kind="correct")
    _override(run_dir, v, "incorrect")
    _override(run_dir, _verdict(run_dir, "beta", kind="incorrect"), "incorrect", "judge was right")
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "overrides: 2 (1 change the label)" in out
    assert "alpha: accuracy 83.3% (judge) -> 75.0% with overrides; coverage 100.0% -> 100.0%" in out
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    o = report["overrides"]
    assert (o["overrides"], o["changed"], o["per_target"]) == (2, 1, {"alpha": 1, "beta": 1})
    assert o["targets"]["alpha"]["accuracy_judge"]["value"] == report["targets"]["alpha"]["accuracy"]["value"]
    assert o["targets"]["alpha"]["accuracy_with_overrides"]["value"] == pytest.approx(9 / 12)
    assert o["targets"]["alpha"]["accuracy_with_overrides"]["low"] is not None
    assert o["judge_vs_people"]["agreed"] == 1 and o["judge_vs_people"]["compared"] == 2
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "| alpha | 1 | 83.3% [" in md and "75.0% [" in md
    assert "<h3>With people's overrides</h3>" in (run_dir / "report.html").read_text(encoding="utf-8")


# --- human labels -----------------------------------------------------------------------------------------

def test_human_agreement_kappa_and_confusion() -> None:
    pairs = [("correct", "correct"), ("correct", "incorrect"), ("incorrect", "incorrect"), ("unrelated", "unrelated"),
             ("unscored", "correct")]
    result = human_agreement(pairs)
    assert (result["items"], result["compared"], result["judge_unscored"], result["agreed"]) == (5, 4, 1, 3)
    assert result["agreement"] == pytest.approx(0.75)
    assert result["confusion"]["correct"]["incorrect"] == 1 and result["confusion"]["incorrect"]["correct"] == 0
    # judge: c c i u; people: c i i u -> po 3/4, pe (2*1 + 1*2 + 1*1)/16 = 5/16
    assert result["cohen_kappa"] == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))


def test_cohen_kappa_edges() -> None:
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) == 1.0
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a", "b"])


def test_overrides_summary_is_none_without_overrides(run_dir: Path) -> None:
    assert overrides_summary(load_run(run_dir)) is None


# --- the review page without a browser --------------------------------------------------------------------

def test_review_rows_filter_and_carry_the_evidence(run_dir: Path) -> None:
    run = load_run(run_dir)
    rows = review_rows(run)
    assert len(rows) == len(run.verdicts)
    wrong = filtered(rows, {"target": "alpha", "verdict": "incorrect"})
    assert len(wrong) == 2 and all(r.target == "alpha" and r.verdict == "incorrect" for r in wrong)
    assert all(r.question and r.answer and r.reason and r.sources for r in wrong)
    source = wrong[0].sources[0]
    assert source.document and source.end > source.start and source.span_text
    cluster = wrong[0].cluster
    assert {r.cluster for r in filtered(rows, {"cluster": cluster})} == {cluster}
    assert filtered(rows, {"overridden": "yes"}) == []


async def _client(server: ReviewServer) -> TestClient:
    client = TestClient(TestServer(server.app(), host="127.0.0.1"))
    await client.start_server()
    server.port = client.port
    return client


async def test_server_escapes_run_strings_and_checks_host_token_and_lock(run_dir: Path) -> None:
    v = _verdict(run_dir, "alpha", kind="correct")
    questions = [json.loads(line) for line in (run_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    for q in questions:
        if q["id"] == v.question_id:
            q["text"] = "<script>alert(1)</script> & \"quoted\""
    (run_dir / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    server = ReviewServer(run_dir, who="ana")
    client = await _client(server)
    try:
        page = await client.get("/")
        body = await page.text()
        assert page.status == 200 and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;" in body
        assert "<script>alert(1)" not in body
        assert "script-src 'nonce-" in page.headers["Content-Security-Policy"]
        assert (await client.get("/", headers={"Host": "evil.example:80"})).status == 403
        form = {"question_id": v.question_id, "unit_id": v.unit_id, "new": "incorrect", "reason": "wrong year",
                "who": "ana", "target": "alpha"}
        assert (await client.post("/override", data={**form, "token": "guess"})).status == 403
        foreign = await client.post("/override", data={**form, "token": server.token},
                                    headers={"Origin": "http://evil.example"})
        assert foreign.status == 403
        assert (await client.post("/override", data={**form, "token": server.token, "reason": " "})).status == 400
        with hold_run_dir(run_dir):  # another writer holds the run: refused, nothing written
            busy = await client.post("/override", data={**form, "token": server.token})
            assert busy.status == 409 and "in use" in await busy.text()
            assert "overrides are refused" in await (await client.get("/")).text()
        assert not (run_dir / OVERRIDES).exists()
        done = await client.post("/override", data={**form, "token": server.token}, allow_redirects=False)
        assert done.status == 303 and done.headers["Location"] == f"/?target=alpha#v-{v.id}"
        row = RunDir(run_dir).current_overrides()[(v.question_id, v.unit_id)]
        assert (row.verdict_before, row.verdict, row.reason, row.who) == ("correct", "incorrect", "wrong year", "ana")
        kept = await (await client.get("/", params={"overridden": "yes"})).text()
        assert f'data-verdict-id="{v.id}"' in kept and "wrong year" in kept
        again = await client.post("/override", data={**form, "token": server.token, "new": "unrelated",
                                                      "reason": "not about the year"}, allow_redirects=False)
        assert again.status == 303
        history = [(r.verdict_before, r.verdict) for r in RunDir(run_dir).read_overrides()]
        assert history == [("correct", "incorrect"), ("incorrect", "unrelated")]
    finally:
        await client.close()


# --- overrides as gold labels: meta --exam --human-labels and judge-stats --human-from-run -----------------

def _review(run_dir: Path) -> dict[str, str]:
    """People review six alpha verdicts: agree on four, overturn two; returns verdict id -> person's label."""
    run = load_run(run_dir)
    chosen = sorted((v for v in run.verdicts.values() if v.target == "alpha"), key=lambda v: v.id)[:6]
    labels = {}
    for n, v in enumerate(chosen):
        new = {"correct": "incorrect", "incorrect": "correct"}.get(v.verdict, "correct") if n < 2 else v.verdict
        _override(run_dir, v, new, f"review {n}")
        labels[v.id] = new
    return labels


def test_meta_exam_human_labels_scores_the_exam_judge_against_people(run_dir: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from examiner.meta.exam_source import EXAM_JUDGE, load_exam_triples

    labels = _review(run_dir)
    items, own = load_exam_triples(run_dir, human_labels=True)
    assert {i.id: str(i.gold_label) for i in items} == labels
    assert len(own) == 6
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"endpoints": {
        "e80": {"provider": "simulated", "model": "sim-acc0.8", "max_concurrency": 8},
        "e50": {"provider": "simulated", "model": "sim-acc0.5", "max_concurrency": 8},
        "meta": {"provider": "simulated", "model": "sim-rel0.9", "max_concurrency": 8}},
        "roles": {"meta_judge": "meta"}}))
    out = tmp_path / "meta"
    # Six people's labels: below the floor of 10 gold items (examiner.meta.gold), so --min-gold lowers it.
    assert main(["meta", "--exam", str(run_dir), "--human-labels", "--min-gold", "6", "--config", str(cfg),
                 "--evaluators", "e80,e50", "--meta-judge", "meta", "--out", str(out), "--bootstrap", "20", "--shuffles", "10"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["items"] == 6 and report["baseline"]["metric"] == "accuracy"
    judge = report["baseline"]["detail"][EXAM_JUDGE]
    assert judge["with_gold"] == 6 and judge["correct"] == 4
    assert report["baseline"]["scores"][EXAM_JUDGE] == pytest.approx(4 / 6)
    assert sum(sum(row.values()) for row in judge["confusion"].values()) == 6
    assert judge["cohen_kappa"] is not None and -1.0 <= judge["cohen_kappa"] < 1.0
    assert "## Agreement with the gold labels" in (out / "report.md").read_text(encoding="utf-8")
    assert "agreement with the gold labels" in capsys.readouterr().out
    assert main(["meta", "--exam", str(run_dir.parent / "nothing"), "--human-labels", "--config", str(cfg),
                 "--evaluators", "e80,e50", "--out", str(tmp_path / "m2")]) == 2


def test_meta_exam_human_labels_without_overrides_is_a_user_error(run_dir: Path) -> None:
    from examiner.core.errors import UserError
    from examiner.meta.exam_source import load_exam_triples

    with pytest.raises(UserError, match="examiner view"):
        load_exam_triples(run_dir, human_labels=True)


def test_judge_stats_human_from_run(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _review(run_dir)
    out = tmp_path / "stats"
    assert main(["judge-stats", "--human-from-run", str(run_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| all (judge's verdict) | 6 | 0 | 0.667 |" in printed
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    overall = report["overall"]
    assert (overall["items"], overall["compared"], overall["agreed"]) == (6, 6, 4)
    assert list(report["per_target"]) == ["alpha"]
    from examiner.api.people import JudgeVsPeopleOptions, judge_vs_people
    from examiner.reporting.model import JudgeVsPeopleReport

    typed = judge_vs_people(JudgeVsPeopleOptions(run_dir=str(run_dir))).report
    assert isinstance(typed, JudgeVsPeopleReport) and typed.overall.agreed == 4 and list(typed.per_target) == ["alpha"]
    off_diagonal = sum(n for j, row in overall["confusion"].items() for h, n in row.items() if j != h)
    assert off_diagonal == 2
    assert list(overall["confusion"]) == ["correct", "incorrect", "abstained", "unrelated"]
    assert main(["judge-stats", "judgments.jsonl", "--human-from-run", str(run_dir)]) == 2
    assert main(["judge-stats"]) == 2
