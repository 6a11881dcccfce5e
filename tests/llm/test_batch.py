"""Provider batch mode on the simulated Files and Batches APIs: the same verdicts as ordinary calls at the
batch price, fallback to ordinary calls for what a batch does not answer, resume after kill -9 while
polling without a second batch, and `examiner judge` with a batch judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from examiner.cli.main import main
from examiner.core.config import EndpointSpec, Settings
from examiner.core.ledger_record import LedgerRecord
from examiner.core.records import UnitOutcome
from examiner.core.rundir import RunDir
from examiner.exam.runner import ExamRequest, start_exam
from examiner.exam.run_writer import RunStore
from examiner.llm import GenerationConfig, Gateway
from examiner.llm.ledger import answered, in_flight
from examiner.llm.fanout import run_bounded
from tests.helpers.killing import kill_examiner_when

PROFILE = {"known": 0.6, "wrong": 0.2, "unknown": 0.2}
FAST_BATCH = {"batch_poll_seconds": 0.05, "batch_poll_max_seconds": 0.2, "batch_quiet_seconds": 0.1}
"""Batch settings that keep tests fast (real runs check every 30 s and up)."""


def _spec(batch: bool, **options: Any) -> EndpointSpec:
    return EndpointSpec(provider="simulated", model="sim", price_input_per_1m=2.5, price_output_per_1m=10.0,
                        max_concurrency=4, batch=batch, **FAST_BATCH, options={"knowledge": PROFILE, **options})


def _settings(batch: bool, **options: Any) -> Settings:
    return Settings(endpoints={"main": _spec(batch, **options)},
                    roles={"examiner": "main", "candidate": "main", "judge": "main"}, exam={"max_rounds": 2})


def _statuses(run_dir: Path) -> dict[str, tuple[str, bool]]:
    return {k: (o.status, o.verdict_id is not None) for k, o in RunStore(run_dir).all(UnitOutcome).items()}


def _billed(run_dir: Path) -> list[LedgerRecord]:
    return [r for r in answered(RunDir(run_dir).ledger_records()) if not r.cache_hit]


def _lines(count: int) -> bytes:
    return "".join(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                               "body": {"model": "sim", "max_tokens": 30,
                                        "messages": [{"role": "user", "content": f"Say something about {i}."}]}}) + "\n"
                   for i in range(count)).encode("utf-8")


def _client(base_url: str) -> Any:
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)


async def _submit(base_url: str, count: int) -> tuple[Any, str]:
    client = _client(base_url)
    upload = await client.files.create(file=("in.jsonl", _lines(count), "application/jsonl"), purpose="batch")
    batch = await client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    return client, batch.id


async def test_simulated_batches_api_through_the_openai_sdk(tmp_path: Path) -> None:
    """The simulated Files and Batches routes as the SDK sees them: a batch runs after `batch_polls` status
    checks; its output lines carry chat completions; a batch kept in `batch_store` is found by a new server."""
    from examiner.llm.batch import BatchResults, parse_result_lines
    from examiner.simulator import SimulatedServer

    options = {"batch_polls": 2, "batch_store": str(tmp_path / "store")}
    async with SimulatedServer(options) as base_url:
        client, batch_id = await _submit(base_url, 6)
        assert (await client.batches.retrieve(batch_id)).status == "in_progress"
        assert (await client.batches.retrieve(batch_id)).status == "in_progress"
        await client.close()
    async with SimulatedServer(options) as base_url:  # a new process's server: the batch went on
        client = _client(base_url)
        done = await client.batches.retrieve(batch_id)
        assert done.status == "completed" and done.request_counts and done.request_counts.completed == 6
        assert done.error_file_id is None and done.output_file_id
        results = BatchResults(status=done.status)
        parse_result_lines((await client.files.content(done.output_file_id)).text, results)
        assert sorted(results.answers) == [f"r{i}" for i in range(6)]
        assert all(body["choices"][0]["message"]["content"] for body in results.answers.values())
        await client.close()


async def test_simulated_batch_expiry_and_line_errors(tmp_path: Path) -> None:
    """An expired batch answers the first half of its lines (the rest: `batch_expired` in the error file);
    `line_error` puts a share of the requests in the error file with HTTP 500."""
    from examiner.llm.batch import BatchResults, parse_result_lines
    from examiner.simulator import SimulatedServer

    for faults, status in (({"expired": 1.0}, "expired"), ({"line_error": 0.5}, "completed")):
        async with SimulatedServer({"batch_faults": faults}) as base_url:
            client, batch_id = await _submit(base_url, 10)
            done = await client.batches.retrieve(batch_id)
            assert done.status == status and done.output_file_id and done.error_file_id
            results = BatchResults(status=done.status)
            for file_id in (done.output_file_id, done.error_file_id):
                parse_result_lines((await client.files.content(file_id)).text, results)
            assert set(results.answers) | set(results.errors) == {f"r{i}" for i in range(10)}
            assert 0 < len(results.errors) < 10
            if status == "expired":
                assert sorted(results.answers) == [f"r{i}" for i in range(5)]
                assert all("batch_expired" in e for e in results.errors.values())
            else:
                assert all("HTTP 500" in e for e in results.errors.values())
            await client.close()


def test_saved_batches_round_trip_and_damage_is_named(tmp_path: Path) -> None:
    from examiner.core.jsonl import CorruptRunFile
    from examiner.core.rundir import SubmittedBatch

    run = RunDir(tmp_path)
    assert run.read_batches() == []
    saved = [SubmittedBatch(id="batch_1", endpoint="main", input_file_id="file-1", custom_ids=["a", "b"], created=1.0)]
    run.write_batches(saved)
    assert run.read_batches() == saved
    (tmp_path / "batches.json").write_text("[{", encoding="utf-8")
    with pytest.raises(CorruptRunFile, match="batches.json"):
        run.read_batches()


async def _ask_twenty(settings: Settings, run_dir: Path) -> list[str]:
    """Twenty distinct judge calls through a fan-out of 4: what a step of a method does."""
    async with Gateway(settings, run_dir) as gw:
        async def one(i: int) -> str:
            result = await gw.chat("judge", [{"role": "user", "content": f"Grade answer {i}."}],
                                   GenerationConfig(max_tokens=40))
            return result.text or ""
        summary = await run_bounded(list(range(20)), one, limit=4)
    return [o.value or "" for o in summary.outcomes]


async def test_one_batch_for_a_fan_out_wider_than_its_limit(tmp_path: Path) -> None:
    """Items waiting in a batch give their fan-out slot away: 20 calls under limit 4 make one batch, and the
    replies are those of ordinary calls, billed at half price."""
    plain = await _ask_twenty(_settings(False), tmp_path / "plain")
    settings = _settings(True)
    # The default quiet window (2 s), not FAST_BATCH's 0.1 s: on a loaded machine the twenty calls can reach
    # the collector more than 0.1 s apart, and it rightly submits what it holds, which makes two batches.
    settings.endpoints["main"] = settings.endpoints["main"].model_copy(update={"batch_quiet_seconds": 2.0})
    batched = await _ask_twenty(settings, tmp_path / "batched")
    assert batched == plain
    saved = RunDir(tmp_path / "batched").read_batches()
    assert len(saved) == 1 and len(saved[0].custom_ids) == 20
    spec = _spec(True)
    rows = _billed(tmp_path / "batched")
    assert len(rows) == 20 and all(r.batch for r in rows)
    for row in rows:
        assert row.cost_usd == pytest.approx(0.5 * spec.cost_usd(row.prompt_tokens, row.completion_tokens))
    assert all(not r.batch for r in _billed(tmp_path / "plain"))


@pytest.mark.parametrize("faults", [{"line_error": 0.3}, {"expired": 1.0}])
async def test_what_a_batch_does_not_answer_is_sent_as_an_ordinary_call(tmp_path: Path, faults: dict[str, float]) -> None:
    """Per-request errors and an expired batch: the missing requests fall back to ordinary calls at the
    standard price; no call is lost and every write-ahead record gets its outcome."""
    plain = await _ask_twenty(_settings(False), tmp_path / "plain")
    batched = await _ask_twenty(_settings(True, batch_faults=faults), tmp_path / "batched")
    assert batched == plain
    rows = _billed(tmp_path / "batched")
    assert len(rows) == 20 and not in_flight(RunDir(tmp_path / "batched").ledger_records())
    fallbacks = [r for r in rows if not r.batch]
    assert 0 < len(fallbacks) < 20
    spec = _spec(True)
    for row in fallbacks:
        assert row.cost_usd == pytest.approx(spec.cost_usd(row.prompt_tokens, row.completion_tokens))


async def test_a_batch_that_cannot_be_submitted_leaves_its_calls_to_ordinary_requests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx
    import openai

    from examiner.llm.batch import BatchCollector

    async def refused(self: BatchCollector, queued: Any) -> str:
        raise openai.APIConnectionError(request=httpx.Request("POST", "http://provider.invalid/v1/files"))

    monkeypatch.setattr(BatchCollector, "_create", refused)
    assert await _ask_twenty(_settings(True), tmp_path / "batched") == await _ask_twenty(_settings(False), tmp_path / "plain")
    rows = _billed(tmp_path / "batched")
    assert len(rows) == 20 and not any(r.batch for r in rows)
    assert RunDir(tmp_path / "batched").read_batches() == []


async def test_batch_exam_gives_the_same_verdicts_at_the_batch_price(small_corpus: Path, tmp_path: Path) -> None:
    request = lambda: ExamRequest([str(small_corpus)], run_id="fixed")  # noqa: E731 - start_exam fills it in
    reference = await start_exam(_settings(False), request(), tmp_path / "plain", quiet=True, report=False)
    info = await start_exam(_settings(True), request(), tmp_path / "batched", quiet=True, report=False)
    assert info.status == reference.status == "completed"
    assert _statuses(tmp_path / "batched") == _statuses(tmp_path / "plain")
    rows = _billed(tmp_path / "batched")
    first_asks = [r for r in rows if not r.repair]
    assert first_asks and all(r.batch for r in first_asks)
    assert sum(r.cost_usd for r in rows) < 0.6 * sum(r.cost_usd for r in _billed(tmp_path / "plain"))
    stages = {(r.round, r.stage) for r in first_asks}
    assert len(RunDir(tmp_path / "batched").read_batches()) <= 2 * len(stages), "a step's calls share batches"


def _batch_store_lines(store: Path) -> dict[str, list[str]]:
    """Batch id -> the custom ids of its input file, for every batch the simulated provider created."""
    created = {}
    for path in (store / "batches").glob("*.json"):
        batch = json.loads(path.read_text())
        lines = (store / "files" / batch["input_file_id"]).read_text().splitlines()
        created[batch["id"]] = [json.loads(line)["custom_id"] for line in lines if line.strip()]
    return created


async def test_kill_while_polling_then_resume_submits_no_second_batch(small_corpus: Path, tmp_path: Path) -> None:
    """`examiner run --simulate` with a batch endpoint, killed (SIGKILL) once its first batch id is saved and
    it polls; `examiner resume` waits on that batch: the provider saw each request in one batch only, and
    the exam completes with the verdicts of an uninterrupted run."""
    store = tmp_path / "provider"
    config = {
        "endpoints": {
            "main": {"base_url": "http://127.0.0.1:9/v1", "model": "sim", "price_input_per_1m": 2.5,
                     "price_output_per_1m": 10.0, "batch": True, **FAST_BATCH},
            "simulated": {"provider": "simulated", "model": "sim",
                          "options": {"knowledge": PROFILE, "batch_delay_s": 1.5, "batch_store": str(store)}},
        },
        "roles": {"examiner": "main", "candidate": "main", "judge": "main"},
        "exam": {"max_rounds": 1},
    }
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    killed = tmp_path / "killed"
    kill_examiner_when(["run", str(small_corpus), "--config", str(config_file), "--simulate", "--out", str(killed),
                        "--quiet"], (killed / "batches.json").exists,
                       too_late="the run ended before its first batch was saved")
    saved = RunDir(killed).read_batches()
    assert len(saved) == 1
    assert any(r.batch for r in in_flight(RunDir(killed).ledger_records())), "killed while its calls waited"

    resumed = subprocess.run([sys.executable, "-m", "examiner.cli.main", "resume", str(killed), "--quiet"],
                             capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert RunStore(killed).read_info().status == "completed"
    created = _batch_store_lines(store)
    keys = [key for lines in created.values() for key in lines]
    assert len(keys) == len(set(keys)), "a request was submitted in two batches"
    assert created[saved[0].id] == saved[0].custom_ids
    ledger = RunDir(killed).ledger_records()
    assert not in_flight(ledger), "every call the killed run left waiting got its outcome"
    billed_keys = [r.call_id for r in _billed(killed) if r.batch]
    assert len(billed_keys) == len(set(billed_keys))

    reference = tmp_path / "reference"  # ordinary calls: the same verdicts (test above), without the delay
    config["endpoints"]["main"]["batch"] = False
    await start_exam(Settings.model_validate(config).simulated(), ExamRequest([str(small_corpus)]), reference,
                     quiet=True, report=False)
    assert _statuses(killed) == _statuses(reference)


PAIRS = [
    {"id": f"q{i}", "question": f"Explain topic number {i} in one sentence.", "a": f"Topic {i} is explained well here.",
     "b": f"Something unrelated about weather {i}.", "gold": 1 + i % 2}
    for i in range(8)
]


def test_examiner_judge_with_a_batch_judge(tmp_path: Path) -> None:
    """`examiner judge --method pairwise --swap` with a batch judge endpoint: the verdicts of ordinary calls,
    every row's first ask in one batch, billed at the batch price."""
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in PAIRS), encoding="utf-8")
    verdicts = {}
    for batch in (False, True):
        config = tmp_path / f"config-{batch}.yaml"
        config.write_text(yaml.safe_dump({"endpoints": {"bj": {"provider": "simulated", "model": "sim",
                                                               "price_input_per_1m": 2.5, "price_output_per_1m": 10.0,
                                                               "batch": batch, **FAST_BATCH}}}), encoding="utf-8")
        out = tmp_path / f"run-{batch}"
        assert main(["judge", str(data), "--method", "pairwise", "--swap", "--config", str(config), "--judge", "bj",
                     "--instruction-field", "question", "--output1-field", "a", "--output2-field", "b",
                     "--label-field", "gold", "--out", str(out)]) == 0
        records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
        verdicts[batch] = sorted((r["id"], r["order"], r["verdict"]) for r in records)
        rows = _billed(out)
        assert rows and all(r.batch == batch for r in rows if not r.repair)
    assert verdicts[True] == verdicts[False]
    assert len(RunDir(tmp_path / "run-True").read_batches()) == 1


def test_examiner_meta_with_batch_evaluators(tmp_path: Path) -> None:
    """`examiner meta` with every endpoint in batch mode: the assessments of ordinary calls, at the batch price."""
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{i}", "input": f"Summarise fact {i}.", "output_1": f"Fact {i} holds.",
                                        "output_2": f"Something else about {i}.", "label": 1 + i % 2}) + "\n"
                            for i in range(6)), encoding="utf-8")
    decisions = {}
    for batch in (False, True):
        endpoints = {name: {"provider": "simulated", "model": model, "price_input_per_1m": 2.5, "price_output_per_1m": 10.0,
                            "batch": batch, **FAST_BATCH}
                     for name, model in (("e80", "sim-acc0.8"), ("e50", "sim-acc0.5"), ("meta", "sim-rel0.9"))}
        config = tmp_path / f"config-{batch}.yaml"
        config.write_text(yaml.safe_dump({"endpoints": endpoints, "roles": {"meta_judge": "meta"}}), encoding="utf-8")
        out = tmp_path / f"run-{batch}"
        assert main(["meta", str(data), "--config", str(config), "--evaluators", "e80,e50", "--meta-judge", "meta",
                     "--out", str(out), "--bootstrap", "20", "--shuffles", "10"]) == 0
        rows = [json.loads(line) for line in (out / "assessments.jsonl").read_text().splitlines()]
        decisions[batch] = sorted((r["item_id"], r["evaluator"], str(r.get("decision"))) for r in rows)
        billed = _billed(out)
        assert billed and all(r.batch == batch for r in billed if not r.repair)
    assert decisions[True] == decisions[False]
