"""`--stop-when`: round 1's clusters in a seeded random order, fed to the sequence in that order, no new
cluster once the rule is met, and the rule refused where its guarantee cannot hold."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from examiner.core.config import EndpointSpec, ExamSettings, Settings
from examiner.core.errors import UserError
from examiner.core.records import QuestionRecord, VerdictRecord
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.run_writer import RunStore
from examiner.reporting import build_report
from examiner.exam.stopping import SEQUENCE_FILE, StopRule, StopWatch, Tally, asking_order, parse_rule


def test_rules_parse_and_bad_ones_are_refused() -> None:
    assert parse_rule("width<=0.15") == StopRule("width", "<=", 0.15)
    assert parse_rule(" accuracy >= 0.8 ").text == "accuracy>=0.8"
    for bad in ("width>=0.1", "accuracy<=1.5", "coverage<=0.2", "width<=0"):
        with pytest.raises(UserError, match="--stop-when"):
            parse_rule(bad)
    assert StopRule("accuracy", ">=", 0.8).met(0.81, 0.9) and StopRule("accuracy", ">=", 0.8).met(0.6, 0.79)
    assert not StopRule("accuracy", ">=", 0.8).met(0.7, 0.85)


def test_the_order_is_seeded_and_the_sequence_waits_for_clusters_asked_before() -> None:
    ids = [f"c{i}" for i in range(10)]
    assert asking_order(ids, 3) == asking_order(list(reversed(ids)), 3) != asking_order(ids, 4)
    order = asking_order(ids, 3)
    watch = StopWatch(StopRule("width", "<=", 0.99), order, {"t": dict.fromkeys(ids, 4)})
    watch.done(order[1], {"t": Tally(4, 4, 4)})
    assert watch.prefix == 0 and not watch.met  # the first cluster asked is not done yet
    watch.done(order[0], {"t": Tally(4, 4, 4)})
    assert watch.prefix == 2


def stop_settings(rule: str) -> Settings:
    sim = EndpointSpec(provider="simulated", model="sim", max_concurrency=2,
                       options={"knowledge": {"known": 0.7, "wrong": 0.2, "unknown": 0.1}})
    return Settings(endpoints={"sim": sim}, roles={"examiner": "sim", "candidate": "sim", "judge": "sim"},
                    exam=ExamSettings(max_rounds=1, cluster_size=3, stop_when=rule))


async def test_a_loose_rule_stops_before_the_clusters_run_out(small_corpus: Path, tmp_path: Path) -> None:
    info = await start_exam(stop_settings("width<=0.95"), ExamRequest([str(small_corpus)]), tmp_path,
                            quiet=True, report=False)
    assert info.status == "completed"
    seq = json.loads((tmp_path / SEQUENCE_FILE).read_text())
    assert seq["met"] and seq["stopped_at"] <= seq["clusters_asked"] < seq["clusters_total"]
    store = RunStore(tmp_path)
    asked = {q.cluster_id for q in store.all(QuestionRecord).values()}
    assert len(asked) >= seq["clusters_asked"] and len(asked) < seq["clusters_total"]
    acc = seq["targets"]["sim"]["accuracy"]
    assert acc["upper"][-1] - acc["lower"][-1] <= 0.95 and len(acc["lower"]) == seq["clusters_asked"]
    assert store.all(VerdictRecord)

    paths = build_report(tmp_path)
    report = json.loads(paths["json"].read_text(encoding="utf-8"))["stopping"]
    assert (report["rule"], report["clusters_asked"], report["stopped_at"]) == ("width<=0.95", seq["clusters_asked"],
                                                                              seq["stopped_at"])
    left = report["clusters_total"] - report["clusters_asked"]
    assert report["saved_calls"] == pytest.approx(report["calls"] / report["clusters_asked"] * left, abs=0.1)
    assert "figure:stopping" in paths and "Stopping rule" in paths["html"].read_text(encoding="utf-8")


@pytest.mark.parametrize(("extra", "message"), [
    (["--max-rounds", "2"], "covers round 1's clusters only (later rounds re-ask what round 1 left uncovered, "
                            "chosen by its results, so no random order covers them and the interval would not hold)"),
    (["--stop-when", "width>=0.1"], "expected width<=W"),
])
def test_what_cannot_hold_is_refused_in_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  extra: list[str], message: str) -> None:
    from examiner.cli.main import main

    args = ["run", str(corpus), "--simulate", "--out", str(tmp_path / "run"), "--stop-when", "width<=0.2", *extra]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_decided_stops_once_the_paired_difference_clears_the_margin() -> None:
    assert parse_rule("decided:0.1") == StopRule("decided", ":", 0.1) and parse_rule("decided:0.1").text == "decided:0.1"
    with pytest.raises(UserError, match="margin"):
        parse_rule("decided:1.5")
    ids = [f"c{i}" for i in range(40)]
    order = asking_order(ids, 0)
    watch = StopWatch(parse_rule("decided:0.1"), order, {"base": dict.fromkeys(ids, 5), "new": dict.fromkeys(ids, 5)})
    for cid in order:
        units = {f"{cid}-{k}": True for k in range(5)}
        watch.done(cid, {"base": Tally(0, 5, 5, dict.fromkeys(units, False)), "new": Tally(5, 5, 5, units)})
        if watch.met:
            break
    assert watch.met and watch.stopped_at is not None and watch.stopped_at < 40
    record = watch.record()
    assert record["difference"]["outcome"] in ("not worse", "equivalent") and record["difference"]["lower"][-1] > -0.1


def test_a_threshold_rule_reads_each_bound_alone_and_stops_no_later_than_the_joint_interval() -> None:
    """accuracy>=A calls on one bound, so it reads bounds each valid alone (a narrower pair than the joint
    interval a width rule reads) and so stops no later on the same clusters."""
    from examiner.stats.sequential import confidence_sequence

    ids = [f"c{i}" for i in range(60)]
    order = asking_order(ids, 3)
    rule = parse_rule("accuracy>=0.6")
    assert rule.sides == "each" and parse_rule("width<=0.2").sides == "joint"
    watch = StopWatch(rule, order, {"t": dict.fromkeys(ids, 4)})
    scores = {cid: 3 + (i % 2) for i, cid in enumerate(ids)}  # accuracy 0.875
    for cid in order:
        watch.done(cid, {"t": Tally(scores[cid], 4, 4)})
        if watch.met:
            break
    assert watch.stopped_at is not None
    correct = np.array([scores[c] for c in order], dtype=float)
    sizes = np.full(60, 4.0)
    joint = confidence_sequence(correct, sizes, sizes)
    each = confidence_sequence(correct, sizes, sizes, sides="each")
    assert watch.interval("t") == (float(each.lower[watch.prefix - 1]), float(each.upper[watch.prefix - 1]))
    joint_stop = int(np.argmax(joint.lower >= 0.6)) + 1
    assert watch.stopped_at == int(np.argmax(each.lower >= 0.6)) + 1 < joint_stop
