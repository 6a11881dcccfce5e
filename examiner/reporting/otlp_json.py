"""Finished OpenTelemetry spans as OTLP/JSON: the JSON form of an ExportTraceServiceRequest.

Why: a file of spans is only useful if a collector can read it; the OTLP file receiver and every OTLP/HTTP
endpoint that takes `application/json` expect this shape (resourceSpans -> scopeSpans -> spans), not the SDK's
`span.to_json()` debugging form. The OTLP/JSON rules kept here (opentelemetry-proto's docs/specification.md):
traceId and spanId as lowercase hex, not base64; 64-bit integers (times, intValue) as decimal strings; enums
(span kind, status code) as their numbers; field names in lowerCamelCase; fields at their default left out.
Written by hand from the SDK's ReadableSpan so that the file needs only opentelemetry-sdk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

CONTENT_TYPE = "application/json"
"""What an OTLP/HTTP endpoint (`/v1/traces`) is told the body is."""
HAS_IS_REMOTE, IS_REMOTE = 0x100, 0x200
"""Span.flags bits: whether the parent's remoteness is known, and whether it is remote (as the SDK sets them)."""


def any_value(value: Any) -> dict[str, Any]:
    """One attribute value as an OTLP AnyValue (bool before int: a bool is an int in Python)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (bytes, bytearray)):
        return {"bytesValue": bytes(value).hex()}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def attributes(values: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """An attribute mapping as OTLP's list of KeyValue."""
    return [{"key": str(key), "value": any_value(value)} for key, value in (values or {}).items()]


def _span(span: Any) -> dict[str, Any]:
    context = span.get_span_context()
    out: dict[str, Any] = {"traceId": f"{context.trace_id:032x}", "spanId": f"{context.span_id:016x}"}
    if span.parent is not None:
        out["parentSpanId"] = f"{span.parent.span_id:016x}"
    out.update({"name": span.name, "kind": span.kind.value + 1,  # the SDK counts from INTERNAL=0, OTLP from UNSPECIFIED=0
                "startTimeUnixNano": str(span.start_time or 0), "endTimeUnixNano": str(span.end_time or 0)})
    if span.attributes:
        out["attributes"] = attributes(span.attributes)
    if span.events:
        out["events"] = [{"timeUnixNano": str(event.timestamp), "name": event.name,
                          **({"attributes": attributes(event.attributes)} if event.attributes else {})}
                         for event in span.events]
    status: dict[str, Any] = {}
    if span.status.status_code.value:
        status["code"] = span.status.status_code.value  # UNSET 0, OK 1, ERROR 2 in both
    if span.status.description:
        status["message"] = span.status.description
    out["status"] = status
    remote = span.parent is not None and span.parent.is_remote
    out["flags"] = HAS_IS_REMOTE | (IS_REMOTE if remote else 0)
    return out


def export_request(spans: Iterable[Any]) -> dict[str, Any]:
    """The spans (the SDK's ReadableSpan) as one ExportTraceServiceRequest in OTLP/JSON, grouped by resource
    and then by instrumentation scope in the order they first appear."""
    groups: dict[int, tuple[Any, dict[tuple[str, str], tuple[Any, list[dict[str, Any]]]]]] = {}
    for span in spans:
        resource = span.resource
        _, scopes = groups.setdefault(id(resource), (resource, {}))
        scope = span.instrumentation_scope
        key = (getattr(scope, "name", ""), getattr(scope, "version", "") or "")
        scopes.setdefault(key, (scope, []))[1].append(_span(span))
    resource_spans: list[dict[str, Any]] = []
    for resource, scopes in groups.values():
        scope_spans = []
        for (name, version), (_, rows) in scopes.items():
            scope_json: dict[str, Any] = {"name": name}
            if version:
                scope_json["version"] = version
            scope_spans.append({"scope": scope_json, "spans": rows})
        resource_spans.append({"resource": {"attributes": attributes(resource.attributes if resource else None)},
                               "scopeSpans": scope_spans})
    return {"resourceSpans": resource_spans}


def spans_of(request: Mapping[str, Any]) -> Sequence[dict[str, Any]]:
    """Every span of an OTLP/JSON request, in order (for readers of the file)."""
    return [span for rs in request.get("resourceSpans", ()) for ss in rs.get("scopeSpans", ())
            for span in ss.get("spans", ())]


def plain_attributes(values: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """OTLP KeyValues back as a plain mapping (intValue as int), for readers of the file."""
    def plain(value: Mapping[str, Any]) -> Any:
        if "intValue" in value:
            return int(value["intValue"])
        if "arrayValue" in value:
            return [plain(v) for v in value["arrayValue"].get("values", ())]
        return next(iter(value.values()), None)

    return {kv["key"]: plain(kv.get("value", {})) for kv in values or ()}


__all__ = ["CONTENT_TYPE", "any_value", "attributes", "export_request", "plain_attributes", "spans_of"]
