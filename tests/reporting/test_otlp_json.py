"""The OTel export's file is OTLP/JSON: the official protobuf definitions (opentelemetry-proto) parse it into the
same ExportTraceServiceRequest that the SDK's own OTLP encoder makes from the same spans, and an exam run's file
parses whole, with ids of the right length and every span under one resource and scope."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from examiner.cli.main import main
from examiner.reporting.otlp_json import any_value, export_request
from tests.helpers.labelled_run import write_labelled_run

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.proto")
IDS = ("traceId", "spanId", "parentSpanId")


def _as_protobuf_json(value: Any) -> Any:
    """OTLP/JSON -> protobuf's canonical JSON: ids from hex to base64, as a collector's OTLP/JSON reader does."""
    if isinstance(value, dict):
        return {k: base64.b64encode(bytes.fromhex(v)).decode() if k in IDS else _as_protobuf_json(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_as_protobuf_json(v) for v in value]
    return value


def _parse(request: dict[str, Any]) -> Any:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return json_format.Parse(json.dumps(_as_protobuf_json(request)), ExportTraceServiceRequest())


def test_the_json_is_what_the_sdks_otlp_encoder_sends() -> None:
    encoder = pytest.importorskip("opentelemetry.exporter.otlp.proto.common._internal.trace_encoder")
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "examiner", "examiner.run_id": "r1"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("examiner")
    root = tracer.start_span("root", attributes={"n": 3, "ids": ["u1", "u2"], "hit": False, "usd": 0.25})
    call = tracer.start_span("chat m", context=trace.set_span_in_context(root), kind=trace.SpanKind.CLIENT,
                             attributes={"gen_ai.usage.input_tokens": 2**40})
    call.add_event("gen_ai.evaluation.result", {"gen_ai.evaluation.score.value": 1.0, "label": "correct"})
    call.set_status(trace.Status(trace.StatusCode.ERROR, "failed"))
    call.end()
    root.end()
    spans = memory.get_finished_spans()
    request = export_request(spans)
    assert _parse(request) == encoder.encode_spans(spans)
    first = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(first["traceId"]) == 32 and len(first["spanId"]) == 16 and first["parentSpanId"]
    assert isinstance(first["startTimeUnixNano"], str) and first["kind"] == 3  # SPAN_KIND_CLIENT


def test_attribute_values_follow_otlp_json() -> None:
    assert any_value(True) == {"boolValue": True}
    assert any_value(7) == {"intValue": "7"}
    assert any_value(0.5) == {"doubleValue": 0.5}
    assert any_value("x") == {"stringValue": "x"}
    assert any_value(["a", 1]) == {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}}


def test_an_exam_runs_span_file_parses_as_an_export_request(tmp_path: Path) -> None:
    run, _, _ = write_labelled_run(tmp_path / "run")
    path = tmp_path / "spans.json"
    assert main(["export", str(run), "--to", "otel", str(path)]) == 0
    request = json.loads(path.read_text(encoding="utf-8"))
    parsed = _parse(request)
    assert len(parsed.resource_spans) == 1 and len(parsed.resource_spans[0].scope_spans) == 1
    spans = parsed.resource_spans[0].scope_spans[0].spans
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1 and roots[0].name.startswith("examiner exam ")
    assert all(len(s.trace_id) == 16 and len(s.span_id) == 8 for s in spans)
    assert {s.trace_id for s in spans} == {roots[0].trace_id}
    assert all(s.parent_span_id == roots[0].span_id for s in spans if s.span_id != roots[0].span_id)
    assert all(s.end_time_unix_nano >= s.start_time_unix_nano for s in spans)
    service = {a.key: a.value.string_value for a in parsed.resource_spans[0].resource.attributes}
    assert service["service.name"] == "examiner"
