"""Replicas: one endpoint served by several servers of one model. Calls spread by least outstanding
requests; a server killed mid-run costs attempts, never a call or a verdict."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from examiner.core.config import EndpointSpec, Settings
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.llm import Gateway, GenerationConfig
from examiner.llm.ledger import STARTED
from examiner.llm.replicas import DOWN_AFTER, Replica, choose
from examiner.simulator import SimulatedProcess
from tests.helpers.simulated_exam import PROFILE, ROLES, outcomes_of

OPTIONS = {"knowledge": PROFILE, "latency_s": 0.02}
KILL_AFTER = 8
"""Requests the doomed server receives before it is killed (the small exam makes 46 calls in all)."""


def replica_settings(urls: list[str]) -> Settings:
    spec = EndpointSpec(provider="openai", base_url=urls[0], replicas=urls[1:], model="sim", price_input_per_1m=2.5,
                        price_output_per_1m=10.0, max_concurrency=4, timeout_s=10, max_attempts=4,
                        backoff_base_s=0.02, replica_cooloff_s=60)
    return Settings(endpoints={"sim": spec}, roles={r: "sim" for r in ROLES}, exam={"max_rounds": 3})


def test_least_outstanding_choice() -> None:
    spec = EndpointSpec(base_url="http://a.invalid/v1", replicas=["http://b.invalid/v1", "http://c.invalid/v1"])
    a, b, c = (Replica(url, spec) for url in [spec.base_url or "", *spec.replicas])
    assert choose([a, b, c]) is a  # all idle and unsent: the first listed
    a.outstanding, b.outstanding, c.outstanding = 2, 1, 3
    assert choose([a, b, c]) is b
    b.outstanding = 2
    a.sent, b.sent = 5, 4
    assert choose([a, b, c]) is b  # equal load: the one sent fewest
    assert choose([a, b, c], tried=[b]) is a  # a call never goes back to a replica it tried
    for _ in range(DOWN_AFTER - 1):
        b.failed()
    assert b.up() and choose([a, b, c]) is b  # failures below DOWN_AFTER keep a replica in
    b.failed()
    assert not b.up() and choose([a, b, c]) is a  # down: left out while others are up
    a.failed(), a.failed(), a.failed(), c.failed(), c.failed(), c.failed()
    assert choose([a, b, c]) is b  # all down: the one whose cool-off ends first
    assert choose([a, b, c], tried=[a, b, c]) is None
    b.down_until = time.monotonic() - 1  # cool-off over: tried again
    assert b.up() and choose([a, b, c]) is b
    b.succeeded()
    assert b.failures == 0 and b.up()


def test_replicas_are_validated() -> None:
    with pytest.raises(ValueError, match="distinct"):
        EndpointSpec(base_url="http://a.invalid/v1", replicas=["http://a.invalid/v1"])
    with pytest.raises(ValueError, match="examiner starts one server"):
        EndpointSpec(provider="simulated", replicas=["http://a.invalid/v1"])


async def test_sequential_calls_go_round_the_replicas_and_the_cache_ignores_which(tmp_path: Path) -> None:
    """One at a time, calls take turns; the same request on another replica set is a cache hit, and the
    ledger names the replica that answered."""
    with SimulatedProcess(OPTIONS) as u1, SimulatedProcess(OPTIONS) as u2, SimulatedProcess(OPTIONS) as u3:
        async with Gateway(replica_settings([u1, u2, u3]), tmp_path) as gw:
            for i in range(6):
                await gw.chat("candidate", [{"role": "user", "content": f"question {i}"}], GenerationConfig(max_tokens=8))
        answered_by = Counter(r["replica"] for r in RunDir(tmp_path).read_ledger() if r["outcome"] == "ok")
        assert answered_by == {u1: 2, u2: 2, u3: 2}
        async with Gateway(replica_settings([u1, u3]), tmp_path) as gw:  # a resume on fewer replicas
            again = await gw.chat("candidate", [{"role": "user", "content": "question 1"}], GenerationConfig(max_tokens=8))
        assert again.cache_hit and again.replica == ""


async def test_concurrent_calls_fill_the_least_busy_replica(tmp_path: Path) -> None:
    """Six calls at once on two replicas: each replica takes three (its own slots), not the first six."""
    with SimulatedProcess(OPTIONS) as u1, SimulatedProcess(OPTIONS) as u2:
        settings = replica_settings([u1, u2]).merged({"endpoints": {"sim": {"max_concurrency": 1}}})
        async with Gateway(settings, tmp_path) as gw:
            await asyncio.gather(*(gw.chat("candidate", [{"role": "user", "content": f"q {i}"}],
                                           GenerationConfig(max_tokens=8)) for i in range(6)))
            endpoint = gw.transport.known("sim")
            assert endpoint is not None and [r.outstanding for r in endpoint.replicas] == [0, 0]
    answered_by = Counter(r["replica"] for r in RunDir(tmp_path).read_ledger() if r["outcome"] == "ok")
    assert answered_by == {u1: 3, u2: 3}


async def _kill_after(process: SimulatedProcess, requests: int, others: list[SimulatedProcess]) -> dict[str, int]:
    """Kill `process` (SIGKILL, mid-request if any) once it has answered `requests`; returns what each
    server had answered by then."""
    while (await asyncio.to_thread(process.stats))["requests"] < requests:
        await asyncio.sleep(0.005)
    served = {p.base_url or "": (await asyncio.to_thread(p.stats))["requests"] for p in [process, *others]}
    assert process.proc is not None
    process.proc.kill()
    return served


async def test_a_replica_killed_mid_run_loses_no_call_and_changes_no_verdict(small_corpus: Path, tmp_path: Path) -> None:
    with SimulatedProcess(OPTIONS) as alone:
        reference = tmp_path / "one-server"
        info = await start_exam(replica_settings([alone]), ExamRequest([str(small_corpus)], run_id="r"), reference,
                                quiet=True, report=False)
    assert info.status == "completed"

    servers = [SimulatedProcess(OPTIONS) for _ in range(3)]
    urls = [s.start() for s in servers]
    try:
        run_dir = tmp_path / "replicas"
        killer = asyncio.create_task(_kill_after(servers[1], KILL_AFTER, [servers[0], servers[2]]))
        info = await start_exam(replica_settings(urls), ExamRequest([str(small_corpus)], run_id="r"), run_dir,
                                quiet=True, report=False)
        served_at_kill = await asyncio.wait_for(killer, timeout=1)
    finally:
        for server in servers:
            server.stop()
    assert info.status == "completed", info.stop_reason
    assert all(count > 0 for count in served_at_kill.values()), served_at_kill  # every replica had calls

    expected = {k: (o.status, o.verdict_id is not None) for k, o in outcomes_of(reference).items()}
    actual = {k: (o.status, o.verdict_id is not None) for k, o in outcomes_of(run_dir).items()}
    assert actual == expected and len(actual) > 0

    ledger = RunDir(run_dir).read_ledger()
    assert not [r for r in ledger if r["outcome"] == "failed"]
    started = {r["call_id"] for r in ledger if r["outcome"] == STARTED}
    finished = {r["call_id"] for r in ledger if r["outcome"] == "ok"}
    assert started <= finished  # no call lost: every request sent got its reply
    answered_by = Counter(r.get("replica") for r in ledger if r["outcome"] == "ok" and not r["cache_hit"])
    assert set(answered_by) == set(urls), answered_by
    transport = [a for r in ledger for a in r.get("attempts", []) if a["status"] in ("connection", "timeout")]
    assert transport and all(a["detail"].startswith(urls[1]) for a in transport)  # failures were the killed one's
    reference_calls = [r for r in RunDir(reference).read_ledger() if r["outcome"] == "ok"]
    assert len([r for r in ledger if r["outcome"] == "ok"]) == len(reference_calls)
