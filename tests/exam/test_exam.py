"""The Ref-Eval exam end to end on the simulated backend: validity, resume after kill -9, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from examiner.core.config import Settings
from examiner.core.errors import UserError
from examiner.core.records import QuestionRecord, VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, resume_exam, start_exam
from examiner.exam.run_writer import RunStore
from examiner.llm.ledger import answered, outcomes as outcome_records
from examiner.simulator import unit_category
from tests.helpers.datasets import FIXTURE_DATA
from tests.helpers.killing import kill_examiner_when
from tests.helpers.simulated_exam import PROFILE, outcomes_of, sim_settings


@pytest.fixture(scope="module")
def medical_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 250 knowledge units from the invented PubMedQA-shaped abstracts of tests/fixtures/data, one
    file per abstract."""
    from examiner.corpus.benchmarks import load_pubmedqa

    folder = tmp_path_factory.mktemp("pubmedqa")
    for item in load_pubmedqa(root=FIXTURE_DATA)[:28]:
        (folder / f"{item.pubid}.txt").write_text("\n\n".join(item.contexts), encoding="utf-8")
    return folder


async def test_simulated_candidate_validity(medical_corpus: Path, tmp_path: Path) -> None:
    """Profile 60/20/20: reported accuracy within 0.03 of the truth, >= 95% of answerable units covered
    within 5 rounds."""
    info = await start_exam(sim_settings(), ExamRequest([str(medical_corpus)], targets=["sim"]), tmp_path, quiet=True, report=False)
    assert info.status == "completed"
    outcomes = outcomes_of(tmp_path).values()
    assert len(outcomes) >= 200
    category = {o.unit_id: unit_category(0, "sim", o.unit_id, PROFILE) for o in outcomes}
    answerable = [o for o in outcomes if category[o.unit_id] != "unknown"]
    true_accuracy = sum(category[o.unit_id] == "known" for o in answerable) / len(answerable)
    covered = [o for o in outcomes if o.status in ("correct", "incorrect")]
    reported = sum(o.status == "correct" for o in covered) / len(covered)
    coverage_of_answerable = sum(o.status in ("correct", "incorrect") for o in answerable) / len(answerable)
    assert abs(reported - true_accuracy) <= 0.03, (reported, true_accuracy)
    assert coverage_of_answerable >= 0.95, coverage_of_answerable
    assert len({r.round for r in info.rounds}) <= 5
    # Unknown units are never covered: they end unanswered (or uncovered when the exam stops first).
    assert all(o.status in ("unanswered", "uncovered") for o in outcomes if category[o.unit_id] == "unknown")


async def test_every_verdict_traces_to_its_question_and_units(small_corpus: Path, tmp_path: Path) -> None:
    await start_exam(sim_settings(), ExamRequest([str(small_corpus)]), tmp_path, quiet=True, report=False)
    store = RunStore(tmp_path)
    questions = store.all(QuestionRecord)
    for verdict in store.all(VerdictRecord).values():
        question = questions[verdict.question_id]
        assert verdict.unit_id in question.targets
        assert set(question.targets) <= set(store.all(__import__("examiner.core.records", fromlist=["UnitRecord"]).UnitRecord))
    ledger = RunDir(tmp_path).ledger_records()
    assert {r.role for r in ledger} == {"examiner", "candidate", "judge"}
    assert all(q.qtype in ("who", "what", "when", "where", "why", "how", "other") for q in questions.values())


async def test_targets_sit_the_same_paper(small_corpus: Path, tmp_path: Path) -> None:
    settings = sim_settings(models=("alpha", "beta"))
    info = await start_exam(settings, ExamRequest([str(small_corpus)], targets=["alpha", "beta"]), tmp_path, quiet=True, report=False)
    questions = RunStore(tmp_path).all(QuestionRecord).values()
    first = {t: sorted((q.cluster_id, q.text) for q in questions if q.round == 1 and q.kind == "question" and q.target == t)
             for t in ("alpha", "beta")}
    assert first["alpha"] and first["alpha"] == first["beta"]
    ledger = outcome_records(RunDir(tmp_path).ledger_records())
    round_one_questions = [r for r in ledger if r.stage == "question" and r.round == 1 and not r.repair]
    assert len(round_one_questions) == len(first["alpha"]) + sum(r.cache_hit for r in round_one_questions)
    assert info.status == "completed"
    # Same paper, different candidates: each target's outcomes follow its own (simulated) knowledge, so
    # the per-unit results differ. Equal maps would mean one target's answers were judged for both.
    by_target: dict[str, dict[str, str]] = {"alpha": {}, "beta": {}}
    for o in outcomes_of(tmp_path).values():
        by_target[o.target][o.unit_id] = o.status
    assert set(by_target["alpha"]) == set(by_target["beta"]) and by_target["alpha"]
    assert by_target["alpha"] != by_target["beta"]


async def test_top_and_noref_baselines_run_on_the_same_corpus(small_corpus: Path, tmp_path: Path) -> None:
    for mode in ("top", "noref"):
        run_dir = tmp_path / mode
        info = await start_exam(sim_settings(), ExamRequest([str(small_corpus)], mode=mode), run_dir, quiet=True, report=False)
        assert info.status == "completed"
        verdicts = RunStore(run_dir).all(VerdictRecord).values()
        assert verdicts and all(v.mode == mode for v in verdicts)
    top_questions = RunStore(tmp_path / "top").all(QuestionRecord).values()
    assert all(len(q.targets) == 1 for q in top_questions)
    top_judge = [r for r in RunDir(tmp_path / "top").ledger_records() if r.role == "judge"]
    assert {r.stage for r in top_judge} == {"judge_top"}


async def test_classic_baseline_scores_on_every_answer(small_corpus: Path, tmp_path: Path) -> None:
    from examiner.core.records import AnswerRecord

    await start_exam(sim_settings(max_rounds=1), ExamRequest([str(small_corpus)]), tmp_path, quiet=True, report=False)
    answers = RunStore(tmp_path).all(AnswerRecord).values()
    assert answers and all(a.bleu is not None and a.embedding_similarity is not None for a in answers)


async def test_budget_stop_keeps_records_and_spend(small_corpus: Path, tmp_path: Path) -> None:
    settings = sim_settings().merged({"budget_usd": 0.02})
    info = await start_exam(settings, ExamRequest([str(small_corpus)]), tmp_path, quiet=True, report=False)
    assert info.status == "budget_exhausted"
    spent = sum(r.cost_usd for r in RunDir(tmp_path).ledger_records())
    assert 0 < spent <= 0.02
    assert outcomes_of(tmp_path), "outcomes are written for a stopped run"


def _write_config(path: Path, settings: Settings) -> None:
    path.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")


@pytest.mark.parametrize("kill_after_records", [3, 40])
async def test_kill_and_resume_gives_same_verdicts(small_corpus: Path, tmp_path: Path, kill_after_records: int) -> None:
    """kill -9 mid-run, then `resume`: the same final verdicts as an uninterrupted run, no call paid twice."""
    settings = sim_settings(latency=0.03)
    reference = tmp_path / "reference"
    await start_exam(settings, ExamRequest([str(small_corpus)], run_id="fixed"), reference, quiet=True, report=False)

    config = tmp_path / "config.yaml"
    _write_config(config, settings)
    killed = tmp_path / "killed"
    ledger = killed / "ledger.jsonl"
    kill_examiner_when(["run", str(small_corpus), "--config", str(config), "--out", str(killed), "--quiet"],
                       lambda: ledger.exists() and len(ledger.read_text().splitlines()) >= kill_after_records)
    before_resume = RunDir(killed).ledger_records()
    paid_before = {r.request_id for r in answered(before_resume) if not r.cache_hit}

    info = await resume_exam(killed, quiet=True, report=False)
    assert info.status == "completed", info.stop_reason
    expected = {k: (o.status, o.verdict_id is not None) for k, o in outcomes_of(reference).items()}
    actual = {k: (o.status, o.verdict_id is not None) for k, o in outcomes_of(killed).items()}
    assert actual == expected
    resumed = [r for r in answered(RunDir(killed).ledger_records()[len(before_resume):]) if not r.cache_hit]
    assert not paid_before & {r.request_id for r in resumed}


def test_append_after_a_torn_line_starts_a_new_line(tmp_path: Path) -> None:
    """A record appended after a kill mid-write must not be glued to the torn fragment."""
    from examiner.core.ledger_record import LedgerRecord
    from examiner.llm.ledger import Ledger

    path = tmp_path / "ledger.jsonl"
    path.write_text('{"role": "judge"}\n{"role": "exam', encoding="utf-8")
    ledger = Ledger(path)
    ledger.append(LedgerRecord.build(role="candidate"))
    ledger.close()
    assert [r.role for r in RunDir(tmp_path).ledger_records()] == ["judge", "candidate"]


async def test_empty_corpus_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "blank.txt").write_text("   \n\n", encoding="utf-8")
    with pytest.raises(UserError):
        await start_exam(sim_settings(), ExamRequest([str(folder)]), tmp_path / "run", quiet=True, report=False)


async def test_binary_and_non_utf8_files_are_counted(small_corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text((small_corpus / sorted(os.listdir(small_corpus))[0]).read_text(), encoding="utf-8")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02binary\x00" * 50)
    (folder / "latin.txt").write_bytes("Caf\xe9 au lait is a coffee drink made with hot milk and served in France.".encode("latin-1"))
    info = await start_exam(sim_settings(max_rounds=1), ExamRequest([str(folder)]), tmp_path / "run", quiet=True, report=False)
    assert [s["path"].endswith("blob.txt") for s in info.skipped_files] == [True]
    assert any(p.endswith("latin.txt") for p in info.decoded_with_replacement)


def test_cli_bad_input_exits_2(tmp_path: Path) -> None:
    from examiner.cli.main import main

    assert main(["run", str(tmp_path / "missing"), "--simulate", "--out", str(tmp_path / "r"), "--quiet"]) == 2
    assert main(["run", "corpora", "--mode", "top", "--budget-usd", "-3", "--out", str(tmp_path / "r2")]) == 2
    assert main(["resume", str(tmp_path / "nothing-here")]) == 2


def test_unreachable_endpoint_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from examiner.cli.main import main

    config = tmp_path / "dead.yaml"
    config.write_text(
        "endpoints:\n  dead:\n    base_url: http://127.0.0.1:9/v1\n    model: x\n    max_attempts: 2\n"
        "    backoff_base_s: 0.01\nroles:\n  examiner: dead\n  judge: simulated\n  candidate: simulated\n"
        "allow_simulated_roles: true\n"  # the dead examiner beside simulated roles is the point here
    )
    code = main(["run", "corpora/examiner-handbook", "--config", str(config), "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 75  # an outage (EX_TEMPFAIL): a retry may succeed, unlike bad input's 2
    assert "examiner: error: every question generation call failed" in capsys.readouterr().err
    assert (tmp_path / "run" / "run.json").exists()


async def test_reports_name_the_judge_that_gave_the_verdicts(small_corpus: Path, tmp_path: Path) -> None:
    """A --judge-mode reviseval exam's reports say so (they used to say only `mode: refeval`)."""
    settings = sim_settings(max_rounds=1).merged({"roles": {"reviser": "sim"}})
    await start_exam(settings, ExamRequest([str(small_corpus)], judge_mode="reviseval"), tmp_path, quiet=True, report=True)
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert (report["run"]["mode"], report["run"]["judge_mode"], report["run"]["judges"]) == ("refeval", "reviseval", [])
    assert "- **judge**: reviseval" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "reviseval" in (tmp_path / "report.html").read_text(encoding="utf-8")
