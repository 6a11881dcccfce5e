"""`examiner estimate` then `examiner run` with one response cache: the pilot is the run's own round 1 on a
seeded sample of the run's round-1 clusters, so the run gets the pilot's calls from the cache (issue 29),
and the estimate still means what it meant (ranges that hold the run, plans from the pilot's verdicts)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from examiner.api.exam import EstimateOptions, estimate_exam as api_estimate
from examiner.cli.commands import exam as command
from examiner.core import rundir
from examiner.core.records import QuestionRecord, SELF_CHECK_STAGE
from examiner.core.rundir import RunDir
from examiner.exam import estimate as estimate_module
from examiner.exam.estimate import estimate_exam
from examiner.exam.plans import pilot_plans
from examiner.exam.run_writer import RunStore
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.ledger import answered, reused
from tests.helpers.simulated_exam import sim_settings

CORPUS = [f"corpora/examiner-handbook/{name}.md" for name in ("01-exam", "02-clustering", "03-judging")]


def reuse_share(pilot_dir: Path, run_dir: Path) -> tuple[int, int]:
    """(pilot calls paid, those the run got from the cache)."""
    pilot = [r for r in answered(RunDir(pilot_dir).ledger_records()) if not r.cache_hit]
    return len(pilot), len(reused(RunDir(pilot_dir).ledger_records(), RunDir(run_dir).ledger_records()))


@pytest.fixture(scope="module")
def pilot_and_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, estimate_module.Estimate]:
    """The default estimate, then the run, sharing one cache folder."""
    work = tmp_path_factory.mktemp("reuse")
    settings = sim_settings(max_rounds=3).merged({"cache_dir": str(work / "cache")})
    estimate = asyncio.run(estimate_exam(settings, ExamRequest(CORPUS), work / "pilot", clusters=2))
    asyncio.run(start_exam(settings, ExamRequest(CORPUS), work / "run", quiet=True, report=False))
    return work / "pilot", work / "run", estimate


def test_run_reuses_the_pilots_calls(pilot_and_run: tuple[Path, Path, estimate_module.Estimate]) -> None:
    pilot, run, _ = pilot_and_run
    calls, reused = reuse_share(pilot, run)
    assert calls >= 10
    assert reused / calls >= 0.9, (reused, calls)


def test_pilot_is_a_sample_of_the_runs_round_one(pilot_and_run: tuple[Path, Path, estimate_module.Estimate]) -> None:
    """The pilot's round-1 clusters are some of the run's, members in the same order, and its questions
    are the run's own (a question's id holds its round, cluster, text and targets)."""
    pilot, run, estimate = pilot_and_run
    chosen = json.loads((pilot / rundir.PILOT).read_text())
    assert chosen["clusters"] == len(chosen["cluster_ids"]) < chosen["round1_clusters"]
    def round_one(folder: Path) -> dict[str, list[str]]:
        return {c.id: c.members for rounds in RunDir(folder).read_clusters().values() for r in rounds
                if r.round == 1 for c in r.clusters}

    sampled, runs = round_one(pilot), round_one(run)
    assert set(sampled) == set(chosen["cluster_ids"]) and all(runs[cid] == sampled[cid] for cid in sampled)
    run_questions = RunStore(run).all(QuestionRecord)
    pilot_questions = RunStore(pilot).all(QuestionRecord)
    assert pilot_questions and set(pilot_questions) <= set(run_questions)
    assert {q.cluster_id for q in pilot_questions.values()} <= set(chosen["cluster_ids"])
    assert {q.round for q in pilot_questions.values()} == {1} and estimate.pilot_rounds == 1
    assert estimate.pilot_units < estimate.units


def test_the_estimate_keeps_its_meaning(pilot_and_run: tuple[Path, Path, estimate_module.Estimate]) -> None:
    """The figures are still the whole run's (the calls the cache serves included) with a range that holds
    it; the notes say what later rounds rest on and what the cache saves; plans still read the pilot."""
    pilot, run, estimate = pilot_and_run
    records = answered(RunDir(run).ledger_records())
    assert estimate.total.calls.low <= len(records) <= estimate.total.calls.high
    info = RunDir(run).read_info()
    assert estimate.rounds.low <= len({r.round for r in info.rounds}) <= estimate.rounds.high
    assert not [r for r in answered(RunDir(pilot).ledger_records()) if r.stage == SELF_CHECK_STAGE]
    assert estimate.self_check_calls.value > 0  # still predicted, from the judge's first judgments
    notes = " ".join(estimate.notes)
    assert "later rounds are extrapolated" in notes and "no judge self-check" in notes
    assert "from the cache" in notes
    plans = pilot_plans(pilot, detect=0.2, half_width=None, corpus_units=estimate.units,
                        corpus_documents=estimate.documents, dollars_per_unit=0.001)
    assert plans.design.n_units > 0 and len(plans.plans) == 1


def test_more_pilot_rounds_measure_later_rounds_and_the_self_check(tmp_path: Path) -> None:
    """`--pilot-rounds 2`: the pilot goes on past round 1 and re-judges, as it did before issue 29. The target
    does not know 40 % of the units, so round 1 leaves some uncovered for round 2 whatever the clusters (with
    the default profile a draw could cover all 12 pilot units in round 1 and end the pilot there)."""
    settings = sim_settings(max_rounds=3).merged(
        {"endpoints": {"sim": {"options": {"knowledge": {"known": 0.4, "wrong": 0.2, "unknown": 0.4}}}}})
    result = api_estimate(EstimateOptions(corpus=tuple(CORPUS), out=str(tmp_path / "pilot"), pilot_rounds=2,
                                          pilot_clusters=2, max_rounds=3), settings)
    assert result.estimate is not None and result.estimate.pilot_rounds == 2
    stages = {r.stage for r in answered(RunDir(tmp_path / "pilot").ledger_records())}
    assert SELF_CHECK_STAGE in stages


def test_pilot_rounds_flag_default_is_the_modules() -> None:
    assert command.PILOT_ROUNDS == estimate_module.PILOT_ROUNDS == EstimateOptions.model_fields["pilot_rounds"].default
    with pytest.raises(Exception, match="--pilot-rounds"):
        api_estimate(EstimateOptions(corpus=tuple(CORPUS), simulate=True, pilot_rounds=0))


def test_a_warm_cache_leaves_the_estimate_as_it_was(tmp_path: Path) -> None:
    """The same estimate (with a --detect plan) on a cold, then a warm shared cache: the figures price every
    call as if nothing were cached (a cache hit carries its reply's tokens), so calls, dollars and the
    plan's dollars agree exactly; the warm one says apart what the cache already held."""
    settings = sim_settings(max_rounds=3).merged({"cache_dir": str(tmp_path / "cache")})
    results = [api_estimate(EstimateOptions(corpus=tuple(CORPUS), out=str(tmp_path / name), pilot_clusters=2,
                                            detect=0.2), settings) for name in ("cold", "warm")]
    cold, warm = (result.estimate for result in results)
    assert cold is not None and warm is not None
    warm_ledger = answered(RunDir(tmp_path / "warm").ledger_records())
    assert warm_ledger and all(r.cache_hit for r in warm_ledger), "the second pilot paid nothing"
    assert cold.total.calls.value > 0 and cold.total.dollars.value > 0
    assert warm.total == cold.total and warm.by_role == cold.by_role
    assert warm.self_check_calls == cold.self_check_calls
    plans = [result.plans for result in results]
    assert plans[0] is not None and plans[1] is not None and plans[0].plans[0].dollars
    assert plans[1].plans[0].dollars == plans[0].plans[0].dollars
    calls = sum(1 for r in warm_ledger if (r.round or 0) <= 1 and r.stage != SELF_CHECK_STAGE)
    for estimate in (cold, warm):
        assert f"the cache would answer {calls} of the calls above" in " ".join(estimate.notes)
    assert f"the cache already held all {len(warm_ledger)} of the pilot's calls" in " ".join(warm.notes)
    assert "already held" not in " ".join(cold.notes)
