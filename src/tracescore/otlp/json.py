"""OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): the one mapping
from JSON to the protobuf ExportTraceServiceRequest, for the HTTP receiver and the file reader.

The service forwards protobuf, so a JSON body is converted once into the message the protobuf
path parses; the file reader converts the same way and then decodes spans as the service does,
so a trace scores the same whichever way it came. `json_format.Parse` would do it at a
twentieth of the speed and names problems in its own terms (reference/performance.md B.1), so
the mapping is written out here: hex ids (base64 accepted too), int64 as strings or numbers,
enums as integers (names tolerated), and unknown fields ignored as the spec requires.

Two ways to meet a problem: the receiver's (`parse_json_request`) refuses the whole request with
an InputError naming the JSON path, as a 400 must; the file reader's (`decode_json_request`)
rejects and counts the resource, scope or span that holds the problem and keeps the rest. A
well-formed span with an id of the wrong length is left for the span decoder to reject.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.errors import InputError
from tracescore.otlp.decode import DecodeResult, KeyFilter
from tracescore.otlp.json_values import (
    as_double,
    as_enum,
    as_id,
    as_int,
    as_list,
    as_object,
    as_str,
    kind_of,
)
from tracescore.otlp.proto import decode_proto_request

__all__ = ["decode_json_request", "json_to_request", "parse_json_request"]

_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def parse_json_request(body: bytes) -> ExportTraceServiceRequest:
    """Decode an OTLP/JSON body; raises InputError naming what is wrong and where."""
    try:
        obj = json.loads(body)
    except UnicodeDecodeError as exc:
        raise InputError(f"body is not UTF-8 JSON: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    return json_to_request(obj, "body")


def decode_json_request(
    body: object, source: str = "request", key_filter: KeyFilter = None
) -> DecodeResult:
    """Spans of one ExportTraceServiceRequest given as parsed JSON (a file's, or a line's).

    Raises InputError when the body is not an object at all; a resource, scope or span that
    cannot be mapped is rejected and counted in the result, naming its JSON path, and the rest
    is decoded as the service decodes protobuf.
    """
    if not isinstance(body, Mapping):
        raise InputError(
            f"{source}: expected a JSON object with resourceSpans, got {kind_of(body)}"
        )
    resource_spans = body.get("resourceSpans", [])
    if not isinstance(resource_spans, list):
        raise InputError(f"{source}: resourceSpans must be a list, got {kind_of(resource_spans)}")
    rejected: list[str] = []
    request = json_to_request(body, source, rejected)
    result = decode_proto_request(request, source, key_filter)
    for problem in rejected:
        result.reject(f"{source}: {problem}")
    return result


def json_to_request(
    obj: object, where: str = "body", rejected: list[str] | None = None
) -> ExportTraceServiceRequest:
    """An ExportTraceServiceRequest from parsed OTLP/JSON.

    Args:
        obj: the parsed JSON.
        where: names the body in the error when it is not a JSON object.
        rejected: None raises InputError at the first problem; a list collects one problem per
            resource, scope or span left out, and the rest is kept.
    """
    request = ExportTraceServiceRequest()
    as_object(obj, where)
    assert isinstance(obj, Mapping)
    for i, rs_obj in enumerate(as_list(obj.get("resourceSpans"), "resourceSpans")):
        try:
            _resource_spans(request, rs_obj, f"resourceSpans[{i}]", rejected)
        except InputError as exc:
            if rejected is None:
                raise
            rejected.append(str(exc))
            del request.resource_spans[-1]
    return request


def _resource_spans(
    request: ExportTraceServiceRequest, rs_obj: object, where: str, rejected: list[str] | None
) -> None:
    rs = request.resource_spans.add()
    rs_obj = as_object(rs_obj, where)
    resource = rs_obj.get("resource")
    if resource is not None:
        resource = as_object(resource, f"{where}.resource")
        rs.resource.SetInParent()
        _attributes(rs.resource.attributes, resource.get("attributes"), f"{where}.resource")
        dropped = as_int(resource.get("droppedAttributesCount", 0), f"{where}.resource")
        if dropped:
            rs.resource.dropped_attributes_count = dropped
    rs.schema_url = as_str(rs_obj.get("schemaUrl", ""), f"{where}.schemaUrl")
    scopes = rs_obj.get("scopeSpans", rs_obj.get("instrumentationLibrarySpans"))
    for j, ss_obj in enumerate(as_list(scopes, f"{where}.scopeSpans")):
        ss_where = f"{where}.scopeSpans[{j}]"
        ss_obj = as_object(ss_obj, ss_where)
        ss = rs.scope_spans.add()
        scope = ss_obj.get("scope", ss_obj.get("instrumentationLibrary"))
        if scope is not None:
            ss.scope.SetInParent()
            _scope(ss.scope, as_object(scope, f"{ss_where}.scope"), f"{ss_where}.scope")
        ss.schema_url = as_str(ss_obj.get("schemaUrl", ""), f"{ss_where}.schemaUrl")
        for k, span_obj in enumerate(as_list(ss_obj.get("spans"), f"{ss_where}.spans")):
            span_where = f"{ss_where}.spans[{k}]"
            try:
                _span(ss.spans.add(), as_object(span_obj, span_where), span_where)
            except InputError as exc:
                if rejected is None:
                    raise
                rejected.append(str(exc))
                del ss.spans[-1]


def _scope(scope: InstrumentationScope, obj: Mapping[str, Any], where: str) -> None:
    # Scalars are set only when given, so the forwarded bytes say what the sender said; a
    # message given as `{}` is marked present, as the protobuf library's own parser does.
    if name := as_str(obj.get("name", ""), f"{where}.name"):
        scope.name = name
    if version := as_str(obj.get("version", ""), f"{where}.version"):
        scope.version = version
    _attributes(scope.attributes, obj.get("attributes"), where)


def _span(span: Span, obj: Mapping[str, Any], where: str) -> None:
    span.trace_id = as_id(obj.get("traceId"), 16, f"{where}.traceId")
    span.span_id = as_id(obj.get("spanId"), 8, f"{where}.spanId")
    span.trace_state = as_str(obj.get("traceState", ""), f"{where}.traceState")
    span.parent_span_id = as_id(obj.get("parentSpanId"), 8, f"{where}.parentSpanId")
    span.flags = as_int(obj.get("flags", 0), f"{where}.flags")
    span.name = as_str(obj.get("name", ""), f"{where}.name")
    span.kind = as_enum(obj.get("kind", 0), _KINDS, f"{where}.kind")  # type: ignore[assignment]
    span.start_time_unix_nano = as_int(
        obj.get("startTimeUnixNano", 0), f"{where}.startTimeUnixNano"
    )
    span.end_time_unix_nano = as_int(obj.get("endTimeUnixNano", 0), f"{where}.endTimeUnixNano")
    _attributes(span.attributes, obj.get("attributes"), where)
    span.dropped_attributes_count = as_int(obj.get("droppedAttributesCount", 0), where)
    for n, event_obj in enumerate(as_list(obj.get("events"), f"{where}.events")):
        event_where = f"{where}.events[{n}]"
        event_obj = as_object(event_obj, event_where)
        event = span.events.add()
        event.time_unix_nano = as_int(
            event_obj.get("timeUnixNano", 0), f"{event_where}.timeUnixNano"
        )
        event.name = as_str(event_obj.get("name", ""), f"{event_where}.name")
        _attributes(event.attributes, event_obj.get("attributes"), event_where)
        event.dropped_attributes_count = as_int(event_obj.get("droppedAttributesCount", 0), where)
    span.dropped_events_count = as_int(obj.get("droppedEventsCount", 0), where)
    for n, link_obj in enumerate(as_list(obj.get("links"), f"{where}.links")):
        link_where = f"{where}.links[{n}]"
        link_obj = as_object(link_obj, link_where)
        link = span.links.add()
        link.trace_id = as_id(link_obj.get("traceId"), 16, f"{link_where}.traceId")
        link.span_id = as_id(link_obj.get("spanId"), 8, f"{link_where}.spanId")
        link.trace_state = as_str(link_obj.get("traceState", ""), f"{link_where}.traceState")
        _attributes(link.attributes, link_obj.get("attributes"), link_where)
        link.flags = as_int(link_obj.get("flags", 0), f"{link_where}.flags")
    span.dropped_links_count = as_int(obj.get("droppedLinksCount", 0), where)
    status = obj.get("status")
    if status is not None:
        status = as_object(status, f"{where}.status")
        span.status.SetInParent()
        if message := as_str(status.get("message", ""), f"{where}.status.message"):
            span.status.message = message
        if code := as_enum(status.get("code", 0), _STATUS, f"{where}.status.code"):
            span.status.code = code  # type: ignore[assignment]


def _attributes(target: Any, raw: object, where: str) -> None:
    for n, kv_obj in enumerate(as_list(raw, f"{where}.attributes")):
        kv_where = f"{where}.attributes[{n}]"
        kv_obj = as_object(kv_obj, kv_where)
        kv: KeyValue = target.add()
        kv.key = as_str(kv_obj.get("key", ""), f"{kv_where}.key")
        value = kv_obj.get("value")
        if value is not None:
            _any_value(kv.value, value, f"{kv_where}.value")


def _any_value(target: AnyValue, raw: object, where: str) -> None:
    obj = as_object(raw, where)
    if "stringValue" in obj:
        target.string_value = as_str(obj["stringValue"], f"{where}.stringValue")
    elif "boolValue" in obj:
        value = obj["boolValue"]
        if not isinstance(value, bool):
            raise InputError(f"{where}.boolValue: expected true or false, got {value!r}")
        target.bool_value = value
    elif "intValue" in obj:
        target.int_value = as_int(obj["intValue"], f"{where}.intValue", signed=True)
    elif "doubleValue" in obj:
        target.double_value = as_double(obj["doubleValue"], f"{where}.doubleValue")
    elif "arrayValue" in obj:
        array = as_object(obj["arrayValue"] or {}, f"{where}.arrayValue")
        for n, item in enumerate(as_list(array.get("values"), f"{where}.arrayValue.values")):
            _any_value(target.array_value.values.add(), item, f"{where}.arrayValue.values[{n}]")
        target.array_value.SetInParent()
    elif "kvlistValue" in obj:
        kvlist = as_object(obj["kvlistValue"] or {}, f"{where}.kvlistValue")
        _attributes_list(target, kvlist.get("values"), f"{where}.kvlistValue")
    elif "bytesValue" in obj:
        text = as_str(obj["bytesValue"], f"{where}.bytesValue")
        try:
            target.bytes_value = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"{where}.bytesValue: expected base64, got {text[:40]!r}") from None


def _attributes_list(target: AnyValue, raw: object, where: str) -> None:
    target.kvlist_value.SetInParent()
    for n, kv_obj in enumerate(as_list(raw, f"{where}.values")):
        kv_where = f"{where}.values[{n}]"
        kv_obj = as_object(kv_obj, kv_where)
        kv = target.kvlist_value.values.add()
        kv.key = as_str(kv_obj.get("key", ""), f"{kv_where}.key")
        if kv_obj.get("value") is not None:
            _any_value(kv.value, kv_obj["value"], f"{kv_where}.value")
