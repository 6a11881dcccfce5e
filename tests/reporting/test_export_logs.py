"""`examiner export --to inspect|otel`: the run as an Inspect AI eval log that inspect_ai reads back with the
report's figures and the ledger's totals, and as OpenTelemetry GenAI spans whose tokens are the ledger's."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from examiner.cli.main import main
from examiner.core.rundir import RunDir
from examiner.llm.ledger import Usage, answered
from examiner.reporting import build_report
from tests.helpers.labelled_run import SECRETS, write_labelled_run


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run, _, _ = write_labelled_run(tmp_path_factory.mktemp("logs") / "run")
    build_report(run)
    return run


def _ledger_usage(run: Path) -> Usage:
    usage = Usage()
    for record in answered(RunDir(run).read().ledger):
        usage.add_record(record)
    return usage


def _jsonl(run: Path, out: Path) -> list[dict[str, Any]]:
    assert main(["export", str(run), "--to", "jsonl", str(out)]) == 0
    return [json.loads(line) for line in (out / "data.jsonl").read_text(encoding="utf-8").splitlines()]


def test_inspect_log_reads_back_with_the_reports_figures(labelled: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    log_module = pytest.importorskip("inspect_ai.log")
    folder = tmp_path / "logs"
    assert main(["export", str(labelled), "--to", "inspect", "--out", str(folder)]) == 0
    assert "exported" in capsys.readouterr().out
    listed = log_module.list_eval_logs(str(folder))  # named as Inspect names its logs, so `inspect view` lists it
    assert len(listed) == 1
    path = Path(listed[0].name.removeprefix("file://"))
    log = log_module.read_eval_log(listed[0])
    report = json.loads((labelled / "report.json").read_text(encoding="utf-8"))
    records = RunDir(labelled).read()
    assert log.status == "success" and log.eval.task == "examiner/exam"
    # one sample per question, each with every targeted unit's label in force (the exports' final label)
    assert log.samples is not None and len(log.samples) == len(records.questions) == log.results.total_samples
    rows = _jsonl(labelled, tmp_path / "rows")
    final = {(r["question_id"], r["unit_id"]): r["final_label"] for r in rows}
    for sample in log.samples:
        question = records.questions[str(sample.id)]
        assert sample.input == question.text and sample.metadata["target"] == question.target
        units = sample.scores["units"].value
        answer = next((a for a in records.answers.values() if a.question_id == question.id), None)
        # inspect view's Answer column is the score's answer: it shows the target's answer, as output does
        assert sample.scores["units"].answer == sample.output.completion == (answer.text if answer else "")
        assert set(units) == set(question.targets)
        assert all(units[u] == final[(question.id, u)] for u in units)
        scored = [label for label in units.values() if label in ("correct", "incorrect")]
        if scored:
            assert sample.scores["question"].value == pytest.approx(scored.count("correct") / len(scored))
    overridden = [s for s in log.samples if any(m["human_label_source"] == "override"
                                                for m in s.scores["units"].metadata.values())]
    assert len(overridden) == 1
    summaries = log_module.read_eval_log_sample_summaries(listed[0])  # what inspect view's sample list reads
    assert [s.scores["units"].answer for s in summaries] == [s.output.completion for s in log.samples]
    assert any(s.output.completion for s in log.samples)
    # the eval's scores are the report's headline figures, per target, with and without the overrides
    scores = {s.name: s for s in log.results.scores}
    assert set(scores) == set(report["targets"])
    for target, figures in report["targets"].items():
        metrics = scores[target].metrics
        assert metrics["accuracy"].value == pytest.approx(figures["accuracy"]["value"])
        assert metrics["coverage"].value == pytest.approx(figures["coverage"]["value"])
        with_overrides = report["overrides"]["targets"][target]
        assert metrics["accuracy_with_overrides"].value == pytest.approx(
            with_overrides["accuracy_with_overrides"]["value"])
    # the eval's usage is the ledger's, as report.json's cost counts it
    usage = log.stats.model_usage
    by_role = report["cost"]["by_role"]
    assert sum(u.input_tokens + (u.input_tokens_cache_read or 0) + (u.input_tokens_cache_write or 0)
               for u in usage.values()) == sum(r["prompt_tokens"] for r in by_role)
    assert sum(u.output_tokens for u in usage.values()) == sum(r["completion_tokens"] for r in by_role)
    assert sum(u.total_cost or 0.0 for u in usage.values()) == pytest.approx(sum(r["cost_usd"] for r in by_role))
    assert set(usage) == {"openai/alpha-7b", "openai/beta-1b", "anthropic/judge-xl", "openai/examiner-m"}
    assert sum(s.metadata["cost_usd"] for s in log.samples) <= sum(r["cost_usd"] for r in by_role) + 1e-9
    text = path.read_text(encoding="utf-8")
    assert not any(secret in text for secret in SECRETS)
    assert main(["export", str(labelled), "--to", "inspect", str(tmp_path / "exam.json")]) == 0  # or a file named
    assert len(log_module.read_eval_log(str(tmp_path / "exam.json")).samples or []) == len(log.samples)


def _spans(path: Path) -> list[dict[str, Any]]:
    """The file's OTLP/JSON spans with their attributes (and their events') as plain mappings."""
    from examiner.reporting.otlp_json import plain_attributes, spans_of

    spans = []
    for span in spans_of(json.loads(path.read_text(encoding="utf-8"))):
        events = [{**e, "attributes": plain_attributes(e.get("attributes"))} for e in span.get("events", [])]
        spans.append({**span, "attributes": plain_attributes(span.get("attributes")), "events": events})
    return spans


def test_otel_spans_carry_the_ledgers_tokens_and_one_event_per_verdict(labelled: Path, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    path = tmp_path / "spans.json"
    assert main(["export", str(labelled), "--to", "otel", str(path)]) == 0
    spans = _spans(path)
    records = RunDir(labelled).read()
    ledger = _ledger_usage(labelled)
    calls = [s for s in spans if s["name"].startswith("chat ")]
    settled = [r for r in records.ledger if r.outcome != "started"]
    assert len(calls) == len(settled) and len(spans) == len(calls) + 1
    assert sum(s["attributes"].get("gen_ai.usage.input_tokens", 0) for s in calls) == ledger.prompt_tokens
    assert sum(s["attributes"].get("gen_ai.usage.output_tokens", 0) for s in calls) == ledger.completion_tokens
    assert sum(s["attributes"].get("examiner.cost_usd", 0.0) for s in calls) == pytest.approx(ledger.cost_usd)
    assert all(s["attributes"]["gen_ai.operation.name"] == "chat" and s["attributes"]["gen_ai.request.model"]
               for s in calls)
    assert sum(1 for s in calls if s["status"].get("code") == 2) == 1  # the failed unit extraction (STATUS_CODE_ERROR)
    events = [e for s in spans for e in s["events"]]
    assert len(events) == len(records.verdicts)
    assert all(e["name"] == "gen_ai.evaluation.result" and e["attributes"]["gen_ai.evaluation.name"] for e in events)
    scored = [e for e in events if e["attributes"]["gen_ai.evaluation.score.label"] in ("correct", "incorrect")]
    assert all(e["attributes"]["gen_ai.evaluation.score.value"] ==
               (1.0 if e["attributes"]["gen_ai.evaluation.score.label"] == "correct" else 0.0) for e in scored)
    assert sum(1 for e in events if e["attributes"].get("examiner.human_label_source") == "override") == 1
    # each verdict sits on the span of the answer it judged when the ledger has that call
    on_answers = [e for s in calls if s["attributes"]["examiner.role"] == "candidate" for e in s["events"]]
    assert len(on_answers) == len(events)
    assert not any(secret in path.read_text(encoding="utf-8") for secret in SECRETS)


class _Collector(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_otel_spans_reach_an_otlp_endpoint(labelled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1/traces"
        assert main(["export", str(labelled), "--to", "otel", "--otlp-endpoint", url]) == 0
    finally:
        server.shutdown()
    assert "to the OTLP endpoint" in capsys.readouterr().out
    sent = [span for body in _Collector.bodies for rs in ExportTraceServiceRequest.FromString(body).resource_spans
            for ss in rs.scope_spans for span in ss.spans]
    tokens = sum(a.value.int_value for span in sent for a in span.attributes if a.key == "gen_ai.usage.input_tokens")
    assert tokens == _ledger_usage(labelled).prompt_tokens


def test_otel_without_its_extra_or_with_two_destinations_is_one_line(labelled: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["export", str(labelled), "--to", "otel"]) == 2
    assert "--otlp-endpoint" in capsys.readouterr().err
    assert main(["export", str(labelled), "--to", "jsonl", str(tmp_path / "j"), "--otlp-endpoint", "http://x"]) == 2
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)  # as if the otel extra were not installed
    assert main(["export", str(labelled), "--to", "otel", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'examiner[otel]'" in err[0]
    assert not (tmp_path / "s.json").exists()
