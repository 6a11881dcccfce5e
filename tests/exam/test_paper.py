"""A frozen exam paper: `examiner run --paper RUN_DIR` puts exactly the earlier run's questions to new
targets, judged against the same units; `examiner compare` shows the sittings side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examiner.cli.main import main
from examiner.core.records import AnswerRecord, QuestionRecord, RunInfo, UnitOutcome, UnitRecord, VerdictRecord
from examiner.core.rundir import RunDir
from tests.helpers.sample_run import write_sample_run

SAME = ("text", "round", "cluster_id", "kind", "qtype", "targets")


def _paper(q: QuestionRecord) -> tuple:
    return tuple(getattr(q, name) for name in SAME)


@pytest.fixture(scope="module")
def sat(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample run (targets alpha and beta) as the paper; two new targets sit alpha's paper."""
    root = tmp_path_factory.mktemp("paper")
    earlier = write_sample_run(root / "earlier")
    out = root / "sitting"
    corpus = json.loads((earlier / "run.json").read_text())["corpus_paths"][0]
    assert main(["run", corpus, "--simulate", "--target", "simulated", "--target", "local", "--paper", str(earlier),
                 "--paper-target", "alpha", "--out", str(out), "--quiet"]) == 0
    return earlier, out


def test_two_targets_sit_identical_questions(sat: tuple[Path, Path]) -> None:
    earlier, out = sat
    paper = sorted(_paper(q) for q in RunDir(earlier).records(QuestionRecord).values() if q.target == "alpha")
    questions = RunDir(out).records(QuestionRecord).values()
    first, second = RunDir(out).read_info().targets
    assert sorted(_paper(q) for q in questions if q.target == first) == paper
    assert sorted(_paper(q) for q in questions if q.target == second) == paper


def test_every_question_answered_and_judged_on_the_same_units(sat: tuple[Path, Path]) -> None:
    earlier, out = sat
    run = RunDir(out)
    assert run.records(UnitRecord).keys() == RunDir(earlier).records(UnitRecord).keys()
    questions, answers = run.records(QuestionRecord), run.records(AnswerRecord)
    assert {a.question_id for a in answers.values()} == set(questions)
    verdicts = run.records(VerdictRecord).values()
    assert sorted((v.question_id, v.unit_id) for v in verdicts) == sorted(
        (q.id, u) for q in questions.values() for u in q.targets)
    info: RunInfo = run.read_info()
    assert info.status == "completed" and info.paper == str(earlier.resolve()) and info.prompts_sha256
    outcomes = run.records(UnitOutcome)
    assert len(outcomes) == 2 * len(run.records(UnitRecord))
    assert {o.status for o in outcomes.values()} <= {"correct", "incorrect", "unanswered", "uncovered"}


def test_compare_shows_the_sittings_side_by_side(sat: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    earlier, out = sat
    capsys.readouterr()
    assert main(["compare", str(earlier), str(out)]) == 0
    printed = capsys.readouterr().out
    for target in ("alpha", "beta", *RunDir(out).read_info().targets):
        assert f"| {target} |" in printed


def test_a_paper_with_several_targets_needs_paper_target(sat: tuple[Path, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    earlier, _ = sat
    corpus = json.loads((earlier / "run.json").read_text())["corpus_paths"][0]
    assert main(["run", corpus, "--simulate", "--paper", str(earlier), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--paper-target" in err[0]
    assert main(["run", corpus, "--simulate", "--paper", str(earlier), "--paper-target", "gamma",
                 "--out", str(tmp_path / "y"), "--quiet"]) == 2
    assert "did not examine 'gamma'" in capsys.readouterr().err


def test_a_sitting_stopped_by_its_budget_resumes_through_the_graph(sat: tuple[Path, Path], tmp_path: Path) -> None:
    """The sitting runs in the exam graph: a budget stop part-way is checkpointed, and `resume` with a larger
    cap continues from the round that ran out of money, ending with the uninterrupted sitting's verdicts and
    paying for no reply twice."""
    earlier, out = sat
    full = RunDir(out)
    spent = sum(r.cost_usd for r in full.ledger_records() if r.outcome == "ok")
    corpus = json.loads((earlier / "run.json").read_text())["corpus_paths"][0]
    stopped = tmp_path / "stopped"
    assert main(["run", corpus, "--simulate", "--target", "simulated", "--target", "local", "--paper", str(earlier),
                 "--paper-target", "alpha", "--out", str(stopped), "--quiet", "--budget-usd", f"{spent / 2:.6f}"]) == 3
    files = RunDir(stopped)
    assert files.read_info().status == "budget_exhausted"
    assert len(files.records(VerdictRecord)) < len(full.records(VerdictRecord))
    assert (stopped / "checkpoints.sqlite").is_file()
    assert main(["resume", str(stopped), "--quiet", "--budget-usd", f"{spent * 4:.6f}"]) == 0
    assert files.read_info().status == "completed"
    verdicts = {(v.question_id, v.unit_id): v.verdict for v in files.records(VerdictRecord).values()}
    assert verdicts == {(v.question_id, v.unit_id): v.verdict for v in full.records(VerdictRecord).values()}
    assert len(files.records(UnitOutcome)) == 2 * len(files.records(UnitRecord))
    ledger = files.ledger_records()
    request = {r.call_id: r.cache_key for r in ledger if r.outcome == "started"}
    paid = [request[r.call_id] for r in ledger if r.outcome == "ok" and not r.cache_hit]
    assert paid and len(paid) == len(set(paid))  # no request paid for twice across the stop


def test_a_sitting_killed_at_every_node_boundary_writes_the_uninterrupted_records(
        sat: tuple[Path, Path], tmp_path: Path) -> None:
    """SIGKILL right after each append of new records (a step's records on disk, its checkpoint not), then
    `resume`, again and again: the sitting's checkpoints carry it on, and it ends with the uninterrupted
    sitting's verdicts, each record once and no call left in flight."""
    from examiner.llm.ledger import in_flight
    from tests.helpers.run_files import record_lines, repeated_ids
    from tests.helpers.killing import kill_until_finished

    earlier, out = sat
    corpus = json.loads((earlier / "run.json").read_text())["corpus_paths"][0]
    killed = tmp_path / "killed"
    sitting = ["run", corpus, "--simulate", "--target", "simulated", "--target", "local", "--paper", str(earlier),
               "--paper-target", "alpha", "--out", str(killed), "--quiet"]
    kills = kill_until_finished(sitting, killed)
    assert kills >= 4, f"only {kills} step boundaries were killed at"
    files, full = RunDir(killed), RunDir(out)
    assert files.read_info().status == "completed"
    assert {(v.question_id, v.unit_id): v.verdict for v in files.records(VerdictRecord).values()} == \
        {(v.question_id, v.unit_id): v.verdict for v in full.records(VerdictRecord).values()}
    assert record_lines(killed) == record_lines(out)
    assert not any(repeated_ids(killed).values()), repeated_ids(killed)
    assert not in_flight(files.ledger_records())
