"""An exam run as OpenTelemetry GenAI spans, sent to an OTLP endpoint or written to a JSON file.

Why: tracing back ends (Jaeger, Tempo, Langfuse, Phoenix, any OTLP collector) show model calls with their
tokens and cost when they follow the GenAI semantic conventions. The ledger already holds every call, so
the spans are made after the run from ledger.jsonl, not while it runs: one root span for the run, and
under it one span per settled model call (`chat <model>`: gen_ai.operation.name, gen_ai.provider.name,
gen_ai.request.model, gen_ai.usage.input_tokens / output_tokens on billed calls, `examiner.cost_usd`,
start and end from the ledger's times, `gen_ai.response.model` where the server named the model that
answered); examiner's own cache hits are spans without usage, failed calls spans with an error status.
What may have been billed though its reply was never used is a span with an error status too, and
`examiner.possibly_billed` and `examiner.worst_case_usd` (the most it can have cost): each `lost` attempt
(sent, its reply late, cut or dropped: one span per attempt, `examiner.lost_status` saying how, from the
end of the request's previous attempt to the moment it was given up), and the calls killed in flight
(`unknown`) or cancelled with a request out. Every verdict is one `gen_ai.evaluation.result` event (gen_ai.evaluation.name,
gen_ai.evaluation.score.label and .value, gen_ai.evaluation.explanation), on the span of the target's
answer it judged when the ledger has that call, else on the root span; `abstained` scores 0 as accuracy
counts it. Each labelled control question (controls.jsonl) is an event of its own on the root span,
gen_ai.evaluation.name `examiner.control_verdict` and `examiner.control` true, scored 1 when the answer
declined or corrected the premise and 0 when it accepted it, so no reader counts it among the
verdicts. The file form is OTLP/JSON
(examiner.reporting.otlp_json), what a collector's file receiver or an OTLP/HTTP JSON endpoint reads.

Nothing secret goes into an attribute: endpoint names and model names, never URLs or keys. The OTLP
exporter takes its headers (e.g. an API key of the collector) from OTEL_EXPORTER_OTLP_HEADERS as usual.
Needs opentelemetry-sdk (and opentelemetry-exporter-otlp-proto-http for an endpoint): the `otel` extra.
"""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from examiner.core.errors import UserError
from examiner.core.records import QuestionRecord
from examiner.core.ledger_record import LedgerRecord
from examiner.llm.ledger import ANSWERED, CANCELLED, LOST, OUTCOMES, STARTED, UNKNOWN, request_key, tokens_of
from examiner.reporting.otlp_json import export_request
from examiner.reporting.endpoint_identity import endpoint_identities
from examiner.reporting.model.endpoints import EndpointIdentity
from examiner.core.control_records import ControlRecord
from examiner.reporting.export_controls import CONTROL_SCORE, sorted_controls
from examiner.reporting.export_labels import endpoint_model, endpoint_provider, human_labels, label_columns
from examiner.reporting.run_reader import RunData
from examiner.core.owned import write_output

EXTRA_HINT = "pip install 'examiner[otel]'"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "examiner.unit_verdict"
"""gen_ai.evaluation.name of the verdict events."""
CONTROL_EVALUATION_NAME = "examiner.control_verdict"
"""gen_ai.evaluation.name of the control questions' events."""
SCORE = {"correct": 1.0, "incorrect": 0.0, "abstained": 0.0}
"""gen_ai.evaluation.score.value of a label, as accuracy counts it (unrelated and unscored have none)."""


def check_extra(endpoint: str | None) -> None:
    """A one-line UserError naming the extra when a package the export needs is not installed."""
    needed = ["opentelemetry.sdk"] + (["opentelemetry.exporter.otlp.proto.http"] if endpoint else [])
    for package in needed:
        try:
            found = importlib.util.find_spec(package) is not None
        except (ValueError, ModuleNotFoundError):
            found = False
        if not found:
            raise UserError(f"--to otel needs the {package.replace('.', '-')} package: {EXTRA_HINT}")


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


POSSIBLY_BILLED = (LOST, UNKNOWN, CANCELLED)
"""Ledger records of what was sent and may have been billed though its reply was never used."""


def _calls(run: RunData) -> list[tuple[LedgerRecord, float, float]]:
    """The settled calls (outcome records) and the lost attempts, with their start and end times in seconds
    since the epoch: the `started` record's time (else the end less the latency; for a lost attempt after
    the first, the end of the request's previous one) and the record's own time (else the run's start). A
    call's span covers all its attempts, lost ones included."""
    sent = {request_key(r): r.ts for r in run.ledger if r.outcome == STARTED and r.ts}
    attempt = dict(sent)
    """Per request, when its next attempt left at the earliest: the start, then the last lost attempt's end."""
    out = []
    for record in run.ledger:
        outcome, key = record.outcome, request_key(record)
        if outcome not in OUTCOMES and outcome != LOST:
            continue
        latency = record.latency_s
        end = (record.ts or 0.0) or (sent.get(key, 0.0) + latency) or run.info.started
        start = (attempt if outcome == LOST else sent).get(key, end - latency)
        if outcome == LOST:
            attempt[key] = end
        out.append((record, start, max(end, start)))
    return out


def _server(ident: EndpointIdentity | None) -> dict[str, Any]:
    """What the call's span says of the server: examiner.endpoint.served_by, and server.address / server.port
    from the URL without credentials."""
    if ident is None:
        return {}
    out: dict[str, Any] = {"examiner.endpoint.served_by": ident.served_by}
    if ident.base_url:
        parts = urlsplit(ident.base_url)
        if parts.hostname:
            out["server.address"] = parts.hostname
        try:
            if parts.port:
                out["server.port"] = parts.port
        except ValueError:
            pass
    return out


def _attributes(run: RunData, record: LedgerRecord, known: dict[str, EndpointIdentity] | None = None) -> dict[str, Any]:
    endpoint = record.endpoint
    ident = (known or {}).get(endpoint)
    simulated = endpoint_provider(run, endpoint) == "simulated"  # no model ran: never the real model's name
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": endpoint_provider(run, endpoint),
        "gen_ai.request.model": endpoint_model(run, endpoint) if simulated else (record.model
                                                                                  or endpoint_model(run, endpoint)),
        **_server(ident),
        "examiner.endpoint": endpoint, "examiner.role": record.role,
        "examiner.stage": str(record.stage), "examiner.round": record.round or 0,
        "examiner.outcome": record.outcome, "examiner.cache_hit": record.cache_hit,
        "examiner.batch": record.batch, "examiner.unit_ids": list(record.unit_ids),
    }
    if record.outcome in ANSWERED and not record.cache_hit:
        tokens = tokens_of(record)
        attrs.update({"gen_ai.usage.input_tokens": tokens["prompt_tokens"],
                      "gen_ai.usage.output_tokens": tokens["completion_tokens"],
                      "gen_ai.usage.cache_read.input_tokens": tokens["cached_tokens"],
                      "gen_ai.usage.cache_creation.input_tokens": tokens["cache_write_tokens"],
                      "examiner.usage.reasoning_tokens": tokens["reasoning_tokens"],
                      "examiner.cost_usd": record.cost_usd})
    if record.outcome in POSSIBLY_BILLED:
        attrs.update({"examiner.possibly_billed": True, "examiner.worst_case_usd": record.worst_case_usd})
        if record.status:
            attrs["examiner.lost_status"] = record.status
    if record.reply_model and not simulated:
        attrs["gen_ai.response.model"] = record.reply_model
    if record.request_id:
        attrs["gen_ai.response.id"] = record.request_id
    if record.finish_reason:
        attrs["gen_ai.response.finish_reasons"] = [record.finish_reason]
    return attrs


def _error_text(record: LedgerRecord) -> str:
    """The error status of a span whose call got no reply to use: its outcome, and for what may have been
    billed, that and the most it can have cost."""
    outcome = record.outcome
    if outcome not in POSSIBLY_BILLED:
        return outcome
    how = f" ({record.status})" if record.status else ""
    return f"{outcome}{how}: possibly billed, up to ${record.worst_case_usd:.6f}"


def _answer_calls(calls: list[tuple[LedgerRecord, float, float]],
                  questions: Iterable[QuestionRecord]) -> dict[str, int]:
    """Per question id, the index of the target's answer call: the first candidate call of its target in its
    round about one of its units (questions without one are left out)."""
    first: dict[tuple[str, int, str], int] = {}
    for i, (record, _, _) in enumerate(calls):
        if record.role == "candidate":
            for unit_id in record.unit_ids:
                first.setdefault((record.endpoint, record.round or 0, unit_id), i)
    out = {}
    for q in questions:
        found = [first[key] for key in ((q.target, q.round, u) for u in q.targets) if key in first]
        if found:
            out[q.id] = min(found)
    return out


def _event(verdict: Any, human: Any) -> dict[str, Any]:
    labels = label_columns(verdict, human)
    attrs: dict[str, Any] = {"gen_ai.evaluation.name": EVALUATION_NAME,
                             "gen_ai.evaluation.score.label": labels["judge_label"],
                             "gen_ai.evaluation.explanation": verdict.reason or "",
                             "examiner.verdict_id": verdict.id, "examiner.question_id": verdict.question_id,
                             "examiner.unit_id": verdict.unit_id, "examiner.target": verdict.target,
                             "examiner.human_label_source": labels["human_label_source"]}
    if labels["judge_label"] in SCORE:
        attrs["gen_ai.evaluation.score.value"] = SCORE[labels["judge_label"]]
    for key in ("human_label", "human_label_by", "human_label_at", "final_label"):
        if labels[key] is not None:
            attrs[f"examiner.{key}"] = labels[key]
    return attrs


def _control_event(record: ControlRecord) -> dict[str, Any]:
    """A labelled control question's event (see the module docstring)."""
    assert record.label is not None
    return {"gen_ai.evaluation.name": CONTROL_EVALUATION_NAME, "gen_ai.evaluation.score.label": record.label,
            "gen_ai.evaluation.score.value": CONTROL_SCORE[record.label],
            "gen_ai.evaluation.explanation": record.reason or "", "examiner.control": True,
            "examiner.control_id": record.id, "examiner.control_kind": record.kind,
            "examiner.question_id": record.question_id, "examiner.target": record.target}


def emit_spans(run: RunData, exporter: Any) -> dict[str, int]:
    """Make the run's spans and events and hand them to `exporter` (an opentelemetry SpanExporter); counts."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "examiner",
                                                        "examiner.run_id": run.info.run_id}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("examiner")
    calls = _calls(run)
    start = min([t for t in (run.info.started, *(s for _, s, _ in calls)) if t], default=0.0)
    end = max([run.info.finished or 0.0, *(e for _, _, e in calls)])
    known = endpoint_identities(run)
    root = tracer.start_span(f"examiner exam {run.info.run_id}", start_time=_ns(start),
                             attributes={"examiner.run_id": run.info.run_id, "examiner.status": run.info.status,
                                         "examiner.targets": list(run.info.targets),
                                         "examiner.endpoints": [f"{n} = {i.text}" for n, i in known.items()]})
    parent = trace.set_span_in_context(root)
    answer_of = _answer_calls(calls, run.questions.values())
    events: dict[int | None, list[Any]] = defaultdict(list)
    for verdict in run.verdicts.values():
        events[answer_of.get(verdict.question_id)].append(verdict)
    people = human_labels(run)
    spans = usage = possibly = 0
    for i, (record, began, ended) in enumerate(calls):
        attributes = _attributes(run, record, known)
        span = tracer.start_span(f"chat {attributes['gen_ai.request.model'] or record.endpoint}",
                                 context=parent, kind=trace.SpanKind.CLIENT, start_time=_ns(began), attributes=attributes)
        if record.outcome not in ANSWERED:
            span.set_status(trace.Status(trace.StatusCode.ERROR, _error_text(record)))
            span.set_attribute("error.type", record.outcome)
        for verdict in events.get(i, []):
            span.add_event(EVALUATION_EVENT, _event(verdict, people.get(verdict.id)), timestamp=_ns(ended))
        span.end(end_time=_ns(ended))
        spans += 1
        possibly += int(record.outcome in POSSIBLY_BILLED)
        usage += int("gen_ai.usage.input_tokens" in (span.attributes or {}))  # type: ignore[attr-defined]
    for verdict in events.get(None, []):
        root.add_event(EVALUATION_EVENT, _event(verdict, people.get(verdict.id)), timestamp=_ns(end))
    controls = [control for control in sorted_controls(run) if control.label is not None]
    for control in controls:
        root.add_event(EVALUATION_EVENT, _control_event(control), timestamp=_ns(end))
    root.end(end_time=_ns(max(end, start)))
    provider.shutdown()
    return {"spans": spans + 1, "calls": spans, "billed": usage, "possibly_billed": possibly,
            "events": len(run.verdicts) + len(controls), "control_events": len(controls)}


def export_spans(run: RunData, *, endpoint: str | None = None, out: str | Path | None = None,
                 timeout_s: float = 10.0) -> dict[str, Any]:
    """Send the spans to an OTLP/HTTP `endpoint` in one request, or write them to `out` as OTLP/JSON (one
    ExportTraceServiceRequest, which a collector's OTLP JSON file receiver reads); a failed send is a one-line UserError that never repeats the URL (it may hold a
    password)."""
    if (endpoint is None) == (out is None):
        raise UserError("--to otel takes either --otlp-endpoint URL or an output file, not both and not neither")
    check_extra(endpoint)
    from opentelemetry.sdk.trace.export import SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    counts = emit_spans(run, memory)
    finished = memory.get_finished_spans()
    if endpoint is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        sender = OTLPSpanExporter(endpoint=endpoint, timeout=timeout_s)
        try:
            result = sender.export(finished)
        finally:
            sender.shutdown()
        if result is not SpanExportResult.SUCCESS:
            raise UserError(f"the OTLP endpoint did not take the {len(finished)} spans (see the exporter's log "
                            "lines above); nothing was written")
        return {**counts, "to": "the OTLP endpoint"}
    path = Path(str(out))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, json.dumps(export_request(finished), ensure_ascii=False, indent=1), "OUT")
    return {**counts, "to": str(path)}


__all__ = ["EVALUATION_EVENT", "EVALUATION_NAME", "check_extra", "emit_spans", "export_spans"]
