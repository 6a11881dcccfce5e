"""The wording check (`--paraphrases`) killed and resumed ends as the uninterrupted run: SIGKILL while its
calls are in flight (after the node before it checkpointed), then at its end (its records on disk, its
checkpoint not); the last resume gives the same verdicts and wordings, pays no request twice and writes no
record line twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from examiner.core import rundir
from examiner.core.config import Settings
from examiner.core.records import VerdictRecord, WordingRecord
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.ledger import in_flight
from tests.helpers.killing import kill_examiner_when, run_examiner_killed_at_new_records
from tests.helpers.run_files import record_lines, repeated_ids
from tests.helpers.simulated_exam import sim_settings

CORPUS = ["corpora/examiner-handbook/01-exam.md"]
"""One handbook document, one round: a few clusters, every one of them re-asked."""
TARGETS = ("sim", "sim2")


def _config(tmp_path: Path) -> Path:
    settings = sim_settings(max_rounds=1, latency=0.05, models=TARGETS, paraphrases=2, paraphrase_share=1.0,
                            self_check_share=0.0).merged({"embedding_cache": str(tmp_path / "embeddings.sqlite")})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
    return path


def _rewording_calls(run_dir: Path) -> int:
    """Requests of the wording check answered so far (the ledger's complete lines)."""
    ledger = run_dir / rundir.LEDGER
    if not ledger.is_file():
        return 0
    rows = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()[:-1]]
    return sum(r.get("stage") == "rewording" and r.get("outcome") == "ok" for r in rows)


def _wordings(run_dir: Path) -> dict[str, tuple[str, str, dict[str, str]]]:
    return {k: (r.text, r.answer, r.labels) for k, r in RunDir(run_dir).records(WordingRecord).items()}


def _verdicts(run_dir: Path) -> dict[tuple[str, str], str]:
    return {(v.question_id, v.unit_id): v.verdict for v in RunDir(run_dir).records(VerdictRecord).values()}


@pytest.mark.slow
async def test_killed_in_and_after_the_wording_check_the_resume_ends_as_the_uninterrupted_run(tmp_path: Path) -> None:
    config = _config(tmp_path)
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    await start_exam(Settings.model_validate(yaml.safe_load(config.read_text(encoding="utf-8"))),
                     ExamRequest(CORPUS, targets=list(TARGETS)), reference, quiet=True, report=False)
    expected = _wordings(reference)
    assert len({r[0] for r in expected.values()}) > 2, "the reference run re-asked too little to test"
    run = ["run", *CORPUS, "--config", str(config), "--quiet", *(a for t in TARGETS for a in ("--target", t))]
    kill_examiner_when([*run, "--out", str(killed)], lambda: _rewording_calls(killed) >= 3,
                       too_late="the run finished before its wording check could be killed")
    assert not RunDir(killed).records(WordingRecord), "killed mid-check: its records were not written yet"
    resume = ["resume", str(killed), "--quiet"]
    assert run_examiner_killed_at_new_records(resume), "the resume ended before the check's records were written"
    assert _wordings(killed) == expected  # its records on disk, its checkpoint not: the next resume runs it again
    assert not run_examiner_killed_at_new_records(resume, kill=False)
    assert _wordings(killed) == expected
    assert _verdicts(killed) == _verdicts(reference)
    assert record_lines(killed) == record_lines(reference)
    assert not any(repeated_ids(killed).values()), repeated_ids(killed)
    assert RunDir(killed).read_info().status == "completed"
    ledger = RunDir(killed).ledger_records()
    request = {r.call_id: r.cache_key for r in ledger if r.outcome == "started"}
    paid = [request[r.call_id] for r in ledger if r.outcome == "ok" and not r.cache_hit]
    assert paid and len(paid) == len(set(paid)), "a request was paid for twice across the kills"
    assert not in_flight(ledger)
    ours = [r for r in ledger if r.stage == "rewording" and r.outcome == "ok"]
    assert sum(not r.cache_hit for r in ours) == sum(r.stage == "rewording" and r.outcome == "ok"
                                                            for r in RunDir(reference).ledger_records())
