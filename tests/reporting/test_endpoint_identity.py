"""Reports and exports name what stands behind each endpoint alias (issue 38, item 4): the model, the server's
URL without credentials, examiner's own local server or simulator as such, and the model the server reported
in its replies where it differs; a simulated twin is never named after the model it stands in for."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from examiner.core.ledger_record import LedgerRecord
from examiner.core.rundir import CACHE, CONFIG
from examiner.reporting import load_run
from examiner.reporting.build import build_report
from examiner.reporting.endpoint_identity import endpoint_identities, reported_models
from examiner.reporting.export_labels import endpoint_model
from examiner.reporting.exports import export_run
from examiner.reporting.inspect_log import inspect_log
from tests.helpers.labelled_run import SECRETS, write_labelled_run

SIMULATED_SETTINGS = {
    "endpoints": {
        "local": {"provider": "local", "model": "smollm2-135m-instruct"},
        "sim-local": {"provider": "simulated", "model": "smollm2-135m-instruct"},
        "alpha": {"provider": "openai", "model": "alpha-7b", "base_url": "http://127.0.0.1:8931/v1?api_key=s3cret"},
        "sim-alpha": {"provider": "simulated", "model": "alpha-7b"},
    },
    "roles": {"examiner": "sim-local", "candidate": "sim-alpha", "judge": "sim-local"},
}
"""What `--simulate` saves: every endpoint X has a simulated twin sim-X carrying X's model name."""


@pytest.fixture()
def labelled(tmp_path: Path) -> Path:
    run, _, _ = write_labelled_run(tmp_path / "run")
    return run


def _cache(run_dir: Path, replies: dict[str, str]) -> None:
    """A response cache holding one reply per key, each naming the model the server gave."""
    with sqlite3.connect(run_dir / CACHE) as db:
        db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, payload TEXT NOT NULL, created REAL)")
        db.executemany("INSERT INTO responses VALUES (?, ?, 0)",
                       [(key, json.dumps({"texts": ["x"], "model": model})) for key, model in replies.items()])


def test_every_report_names_model_and_url_without_credentials(labelled: Path) -> None:
    build_report(labelled)
    report = json.loads((labelled / "report.json").read_text(encoding="utf-8"))
    alpha = report["endpoints"]["alpha"]
    assert (alpha["model"], alpha["provider"], alpha["served_by"]) == ("alpha-7b", "openai", "remote")
    assert alpha["base_url"] == "http://***@localhost:9/v1" and "target" in alpha["roles"]
    assert alpha["text"] == "alpha-7b at http://***@localhost:9/v1"
    assert report["endpoints"]["judge-model"]["roles"] == ["judge"]
    for name in ("report.json", "report.md", "report.html"):
        text = (labelled / name).read_text(encoding="utf-8")
        assert not any(secret in text for secret in SECRETS), name
    md = (labelled / "report.md").read_text(encoding="utf-8")
    assert "Endpoints: alpha = alpha-7b at http://" in md and "judge-model = judge-xl (anthropic)" in md
    assert "alpha = alpha-7b at http://" in (labelled / "report.html").read_text(encoding="utf-8")


def test_a_model_the_server_reported_differently_is_shown_beside_the_configured_one(labelled: Path) -> None:
    run = load_run(labelled)
    run.ledger = [LedgerRecord.build(endpoint="alpha", cache_key="k1", outcome="ok"),
                  LedgerRecord.build(endpoint="alpha", cache_key="k2", outcome="ok"),
                  LedgerRecord.build(endpoint="beta", cache_key="k3", outcome="ok")]
    _cache(labelled, {"k1": "alpha-7b", "k2": "alpha-7b-q4_k_m.gguf", "k3": "beta-1b", "other": "x"})
    assert reported_models(labelled, run.ledger) == {"alpha": {"alpha-7b", "alpha-7b-q4_k_m.gguf"}, "beta": {"beta-1b"}}
    known = endpoint_identities(run)
    assert known["alpha"].reported_models == ["alpha-7b", "alpha-7b-q4_k_m.gguf"]
    assert known["alpha"].text.endswith("; the server reported alpha-7b-q4_k_m.gguf in its replies")
    assert "reported" not in known["beta"].text  # the same name: said once
    (labelled / CACHE).write_bytes(b"not a database")
    assert reported_models(labelled, run.ledger) == {}


def test_the_simulated_twin_is_not_named_after_the_local_model(labelled: Path, tmp_path: Path) -> None:
    settings = json.loads(json.dumps(SIMULATED_SETTINGS))
    (labelled / CONFIG).write_text(yaml.safe_dump(settings), encoding="utf-8")
    info = json.loads((labelled / "run.json").read_text(encoding="utf-8"))
    info["targets"], info["judges"] = ["sim-alpha"], []
    (labelled / "run.json").write_text(json.dumps(info), encoding="utf-8")
    run = load_run(labelled)
    known = endpoint_identities(run)
    twin = known["sim-local"]
    assert (twin.model, twin.served_by, twin.twin_of) == ("simulated", "simulated", "local")
    assert twin.text == ("simulated, no model ran (in place of local: smollm2-135m-instruct, local (llama.cpp server "
                         "examiner starts on 127.0.0.1))")
    assert known["sim-alpha"].text == ("simulated, no model ran (in place of alpha: alpha-7b at "
                                       "http://127.0.0.1:8931/v1?api_key=***)")

    out = tmp_path / "export"
    export_run(labelled, "jsonl", out)
    card = (out / "README.md").read_text(encoding="utf-8")
    models = card.split("## Models", 1)[1].split("## Prompts", 1)[0]
    assert "| judge | sim-local | simulated, no model ran (in place of local:" in models
    assert "| sim-local | smollm2-135m-instruct |" not in models and "s3cret" not in card
    row = json.loads((out / "data.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert row["judge_model"] == "simulated (in place of local: smollm2-135m-instruct)"
    assert endpoint_model(run, "sim-alpha") == "simulated (in place of alpha: alpha-7b)"
    assert endpoint_model(run, "alpha") == "alpha-7b"

    log = inspect_log(run)
    assert log["eval"]["model_roles"]["judge:sim-local"] == {"model": "simulated/sim-local"}
    assert log["eval"]["metadata"]["endpoints"]["sim-local"] == twin.text


def test_the_inspect_log_and_spans_carry_the_server(labelled: Path) -> None:
    run = load_run(labelled)
    log = inspect_log(run)
    alpha = log["eval"]["model_roles"]["target:alpha"]
    assert alpha["model"] == "openai/alpha-7b" and alpha["base_url"].endswith("localhost:9/v1")
    assert "hunter2" not in json.dumps(log)
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from examiner.reporting.otel_spans import emit_spans

    memory = InMemorySpanExporter()
    emit_spans(run, memory)
    spans = memory.get_finished_spans()
    root = next(s for s in spans if s.name.startswith("examiner exam"))
    assert any(line.startswith("alpha = alpha-7b at http://") for line in root.attributes["examiner.endpoints"])
    call = next(s for s in spans if s.attributes.get("examiner.endpoint") == "alpha")
    assert (call.attributes["server.address"], call.attributes["server.port"]) == ("localhost", 9)
    assert call.attributes["examiner.endpoint.served_by"] == "remote"
    assert "hunter2" not in json.dumps([dict(s.attributes) for s in spans])


def test_the_ledger_names_the_served_model_and_the_cache_is_only_read_for_older_runs(labelled: Path) -> None:
    """`reply_model` in the ledger is what the server said; the response cache (here naming something else)
    is read only for an endpoint whose answered records lack it (a run from before the ledger kept it)."""
    run = load_run(labelled)
    _cache(labelled, {"k1": "from-the-cache", "k3": "beta-1b"})
    run.ledger = [LedgerRecord.build(endpoint="alpha", cache_key="k1", outcome="ok", reply_model="alpha-7b-0125"),
                  LedgerRecord.build(endpoint="alpha", outcome="reconciled", reply_model="alpha-7b"),
                  LedgerRecord.build(endpoint="alpha", outcome="failed", cache_key="k1"),
                  LedgerRecord.build(endpoint="beta", cache_key="k3", outcome="ok")]
    assert reported_models(labelled, run.ledger) == {"alpha": {"alpha-7b", "alpha-7b-0125"}, "beta": {"beta-1b"}}
    (labelled / CACHE).unlink()
    assert reported_models(labelled, run.ledger) == {"alpha": {"alpha-7b", "alpha-7b-0125"}}
    assert endpoint_identities(run)["alpha"].text.endswith("; the server reported alpha-7b-0125 in its replies")
