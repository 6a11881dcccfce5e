"""`examiner estimate`: a seeded pilot through the exam's own nodes, extrapolated with a range that
covers the full run; the simulated replay stays available and says what it is."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from examiner.cli.main import main
from examiner.core.config import EndpointSpec
from examiner.core import rundir
from examiner.core.rundir import RunDir
from examiner.exam.estimate import dollars, estimate_exam, simulate_rounds
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm.ledger import answered, spent_usd
from tests.helpers.simulated_exam import sim_settings

HANDBOOK = "corpora/examiner-handbook"


def test_pilot_range_covers_the_full_run(tmp_path: Path) -> None:
    """The pilot examines a sample (fewer units than the corpus, real calls in its own ledger); the
    ranges of calls, tokens, dollars, rounds and clusters hold the uninterrupted run's figures."""
    settings = sim_settings(max_rounds=8)
    estimate = asyncio.run(estimate_exam(settings, ExamRequest([HANDBOOK]), tmp_path / "pilot"))
    assert 0 < estimate.pilot_units < estimate.units
    pilot_ledger = answered(RunDir(tmp_path / "pilot").ledger_records())
    assert pilot_ledger and sum(r["calls"] for r in estimate.pilot_spent) == len(pilot_ledger)
    assert {u.role for u in estimate.by_role} == {"examiner", "candidate", "judge"}

    full = tmp_path / "full"
    info = asyncio.run(start_exam(settings, ExamRequest([HANDBOOK]), full, quiet=True, report=False))
    records = [r for r in answered(RunDir(full).ledger_records()) if not r.cache_hit]
    truth = {"calls": len(records), "prompt_tokens": sum(r.prompt_tokens for r in records),
             "completion_tokens": sum(r.completion_tokens for r in records),
             "dollars": spent_usd(RunDir(full).ledger_records())}
    for name, value in truth.items():
        figure = getattr(estimate.total, name)
        assert figure.low <= value <= figure.high, (name, value, figure)
    assert estimate.rounds.low <= len({r.round for r in info.rounds}) <= estimate.rounds.high
    assert estimate.clusters.low <= sum(r.clusters for r in info.rounds) <= estimate.clusters.high
    assert estimate.units == info.units and estimate.documents == info.documents


def test_cli_prints_measured_and_extrapolated_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pilot = tmp_path / "pilot"
    assert main(["estimate", HANDBOOK, "--simulate", "--out", str(pilot), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "measured" in out and "extrapolated" in out and "what the pilot cost" in out
    assert (pilot / rundir.LEDGER).is_file() and (pilot / rundir.ESTIMATE).is_file()
    again = tmp_path / "again"
    assert main(["estimate", HANDBOOK, "--simulate", "--out", str(again), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((again / rundir.ESTIMATE).read_text())
    assert printed["method"] == "pilot" and printed["units"] > printed["pilot_units"]
    assert "units" in printed["measured"] and "total" in printed["extrapolated"]
    total = printed["total"]["calls"]
    assert total["low"] <= total["value"] <= total["high"]
    assert printed["documents"] == 4 and printed["bootstrap"] == 2000 and printed["interval"] == 0.9
    assert json.loads((again / rundir.ESTIMATE).read_text())["total"] == json.loads(
        (pilot / rundir.ESTIMATE).read_text())["total"], "the estimate is seeded: two pilots agree"


def test_replay_is_labelled_as_simulated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(sim_settings(max_rounds=1).model_dump(mode="json")), encoding="utf-8")
    files = [str(p) for p in sorted(Path(HANDBOOK).glob("*.md"))[:1]]
    assert main(["estimate", *files, "--config", str(config), "--replay-simulated"]) == 0
    assert "SIMULATED REPLAY" in capsys.readouterr().out
    assert main(["estimate", *files, "--config", str(config), "--replay-simulated", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "simulated replay"


def test_stop_rule_at_full_size() -> None:
    """The exam's stop rule: a round covering less than min_round_coverage of its pool is the last one,
    as is max_rounds; without a generator the expected numbers are used."""
    settings = sim_settings(max_rounds=8)
    rounds, pools = simulate_rounds(100, np.array([[0.5, 0.0], [0.01, 0.0]]), settings, "refeval", None)
    assert rounds == 2 and list(pools) == [100, 50]
    rounds, _ = simulate_rounds(100, np.array([[0.1, 0.0]]), settings, "refeval", None)
    assert rounds == 8
    assert simulate_rounds(100, np.array([[0.1, 0.0]]), settings, "top", None)[0] == 1
    rng = np.random.default_rng(0)
    small = [simulate_rounds(5, np.array([[0.5, 0.0], [0.05, 0.0]]), settings, "refeval", rng)[0] for _ in range(200)]
    large = [simulate_rounds(500, np.array([[0.5, 0.0], [0.05, 0.0]]), settings, "refeval", rng)[0] for _ in range(200)]
    assert np.mean(small) < np.mean(large), "a small pool stops sooner on a round that covers nothing"


def test_dollars_are_the_endpoints_prices() -> None:
    spec = EndpointSpec(provider="simulated", price_input_per_1m=2.0, price_output_per_1m=8.0,
                        price_cached_input_per_1m=0.5, batch_price_factor=0.5)
    assert dollars(1_000_000, 500_000, spec) == pytest.approx(6.0)
    assert dollars(1_000_000, 500_000, spec, pricing="batch") == pytest.approx(3.0)
    # a quarter of the prompt from the provider's cache: 750k at $2, 250k at $0.5, 500k out at $8
    assert dollars(1_000_000, 500_000, spec, pricing="cached", cached_share=0.25) == pytest.approx(5.625)
    assert dollars(1_000_000, 500_000, spec, pricing="standard", cached_share=0.25) == pytest.approx(6.0)


def test_estimate_prices_the_same_tokens_standard_batch_and_cached(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Side by side before a run: batch is the endpoints' batch_price_factor of standard; the cached-prefix
    figure uses the prompt-cache share the pilot's endpoints reported (none here: the exam's prompts are
    shorter than the 1,024 tokens a provider caches, so it equals standard)."""
    settings = sim_settings(max_rounds=2)
    data = settings.model_dump(mode="json")
    for spec in data["endpoints"].values():
        spec.update(price_input_per_1m=10.0, price_output_per_1m=30.0, price_cached_input_per_1m=5.0,
                    batch_price_factor=0.5)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["estimate", HANDBOOK, "--config", str(config), "--out", str(tmp_path / "p"), "--json"]) == 0
    total = json.loads(capsys.readouterr().out)["total"]
    priced = total["dollars_by_pricing"]
    assert priced["standard"]["value"] == pytest.approx(total["dollars"]["value"]) and total["dollars"]["value"] > 0
    assert priced["batch"]["value"] == pytest.approx(0.5 * priced["standard"]["value"])
    assert priced["cached"]["value"] == pytest.approx(priced["standard"]["value"])
    assert main(["estimate", HANDBOOK, "--config", str(config), "--out", str(tmp_path / "q"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "priced three ways" in out and "cached prefix" in out


def test_pilot_stopped_before_units_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cap too small for llm unit extraction leaves the pilot nothing to examine: one line, exit 2."""
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(sim_settings(unit_mode="llm").model_dump(mode="json")), encoding="utf-8")
    pilot = tmp_path / "pilot"
    assert main(["estimate", HANDBOOK, "--config", str(config), "--budget-usd", "0.00001", "--out", str(pilot),
                 "--quiet"]) == 2
    assert "the pilot stopped before it had units to examine (budget_exhausted" in capsys.readouterr().err
    assert (pilot / rundir.LEDGER).is_file()
