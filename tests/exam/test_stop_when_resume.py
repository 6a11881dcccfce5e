"""A run with `--stop-when` killed (SIGKILL at every node boundary) or stopped (SIGTERM with calls in
flight) and resumed ends as the uninterrupted run: the same clusters asked, the same stopping point and
sequence, each record once, no call paid for twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from examiner.core import rundir
from examiner.core.ledger_record import LedgerRecord
from examiner.core.records import VerdictRecord
from examiner.core.rundir import RunDir
from examiner.exam.stopping import SEQUENCE_FILE, StopRule, StopWatch, Tally, asking_order
from examiner.llm.ledger import in_flight
from tests.helpers.killing import kill_until_finished, run_examiner_killed_at_new_records
from tests.helpers.run_files import record_lines, repeated_ids
from tests.helpers.simulated_exam import sim_settings

CORPUS = ["corpora/examiner-handbook/01-exam.md", "corpora/examiner-handbook/02-clustering.md"]
"""22 units in 8 clusters of 3: `width<=0.5` is met after 4 clusters, 2 more are in the window, 2 never asked."""


def _config(tmp_path: Path, latency: float = 0.0) -> Path:
    settings = sim_settings(max_rounds=1, latency=latency, cluster_size=3, stop_when="width<=0.5").merged(
        {"embedding_cache": str(tmp_path / "embeddings.sqlite")})
    path = tmp_path / f"config-{latency}.yaml"
    path.write_text(yaml.safe_dump(settings.model_dump(mode="json")), encoding="utf-8")
    return path


def _sequence(run_dir: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((run_dir / SEQUENCE_FILE).read_text(encoding="utf-8"))
    return data


def _verdicts(run_dir: Path) -> dict[tuple[str, str], str]:
    return {(v.question_id, v.unit_id): v.verdict for v in RunDir(run_dir).records(VerdictRecord).values()}


def _paid_once(run_dir: Path) -> None:
    ledger = RunDir(run_dir).ledger_records()
    request = {r.call_id: r.cache_key for r in ledger if r.outcome == "started"}
    paid = [request[r.call_id] for r in ledger if r.outcome == "ok" and not r.cache_hit]
    assert paid and len(paid) == len(set(paid)), "a request was paid for twice across the stops"
    assert not in_flight(ledger)


def _same_as(run_dir: Path, reference: Path) -> None:
    seq, ref = _sequence(run_dir), _sequence(reference)
    assert ref["met"] and ref["clusters_asked"] < ref["clusters_total"], "the reference run must stop early"
    assert seq == ref
    assert _verdicts(run_dir) == _verdicts(reference)
    assert record_lines(run_dir) == record_lines(reference)
    assert not any(repeated_ids(run_dir).values()), repeated_ids(run_dir)
    assert RunDir(run_dir).read_info().status == "completed"
    _paid_once(run_dir)


def test_the_clusters_asked_follow_from_the_prefix_not_from_which_chain_finished_first() -> None:
    """Clusters finishing out of order: the rule is read after each cluster of the prefix (not only where
    a jump of the prefix lands), and after the stop at k exactly the first k + window are asked."""
    ids = [f"c{i}" for i in range(20)]
    order = asking_order(ids, 1)
    watch = StopWatch(StopRule("width", "<=", 0.9), order, {"t": dict.fromkeys(ids, 5)}, window=3)
    assert [watch.may_start(j) for j in range(5)] == [True] * 4 + [False]
    for cid in order[1:6]:  # the first cluster is slow: nothing moves
        watch.done(cid, {"t": Tally(5, 5, 5)})
    assert watch.prefix == 0 and not watch.met
    watch.done(order[0], {"t": Tally(5, 5, 5)})  # the prefix jumps from 0 to 6
    reference = StopWatch(StopRule("width", "<=", 0.9), order, {"t": dict.fromkeys(ids, 5)}, window=3)
    for cid in order[:6]:  # the same clusters finishing in order
        reference.done(cid, {"t": Tally(5, 5, 5)})
        if reference.met:
            break
    assert watch.stopped_at == reference.stopped_at is not None and watch.stopped_at < 6
    assert [watch.asks(j) for j in range(20)] == [j < watch.stopped_at + 3 for j in range(20)]


@pytest.mark.slow
def test_killed_at_every_node_boundary_the_resumes_end_as_the_uninterrupted_run(tmp_path: Path) -> None:
    config = _config(tmp_path)
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    run = ["run", *CORPUS, "--config", str(config), "--quiet"]
    assert not run_examiner_killed_at_new_records([*run, "--out", str(reference)], kill=False)
    kills = kill_until_finished([*run, "--out", str(killed)], killed)
    assert kills >= 4, f"only {kills} node boundaries were killed at"
    _same_as(killed, reference)


@pytest.mark.slow
def test_a_sigterm_with_calls_in_flight_then_resume_ends_as_the_uninterrupted_run(tmp_path: Path) -> None:
    config = _config(tmp_path, latency=0.2)
    reference, stopped = tmp_path / "reference", tmp_path / "stopped"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    base = [sys.executable, "-m", "examiner.cli.main", "run", *CORPUS, "--config", str(config), "--quiet"]
    assert subprocess.run([*base, "--out", str(reference)], env=env, capture_output=True).returncode == 0
    process = subprocess.Popen([*base, "--out", str(stopped)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    ledger = stopped / rundir.LEDGER
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:  # a few calls answered, some in flight
        rows = [LedgerRecord.model_validate_json(line) for line in ledger.read_text().splitlines()[:-1]] \
            if ledger.exists() else []
        if sum(r.outcome == "ok" for r in rows) >= 6 and in_flight(rows):
            break
        time.sleep(0.01)
    assert process.poll() is None, "the run ended before it could be stopped"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143, err[-2000:]
    assert RunDir(stopped).read_info().status == "interrupted"
    resumed = subprocess.run([sys.executable, "-m", "examiner.cli.main", "resume", str(stopped), "--quiet"],
                             env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    _same_as(stopped, reference)
