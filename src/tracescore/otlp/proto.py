"""OTLP protobuf ExportTraceServiceRequest to SpanRecords.

Reading attributes off upb messages costs about 1 µs each (reference/performance.md), so the
receiver passes a key filter and only the keys trajectories need are decoded.
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tracescore.errors import InputError
from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.otlp.decode import DecodeResult, KeyFilter

__all__ = ["decode_any_value", "decode_proto_request", "parse_proto_request"]


def parse_proto_request(body: bytes, source: str = "request") -> ExportTraceServiceRequest:
    """Parse protobuf bytes; raises InputError naming the source when they are not OTLP."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception as exc:  # protobuf raises DecodeError, sometimes plain RuntimeError
        raise InputError(f"{source}: not an OTLP ExportTraceServiceRequest: {exc}") from exc
    return request


def decode_proto_request(
    request: ExportTraceServiceRequest | bytes,
    source: str = "request",
    key_filter: KeyFilter = None,
) -> DecodeResult:
    """Decode a request; spans with invalid ids are rejected and counted."""
    if isinstance(request, bytes):
        request = parse_proto_request(request, source)
    result = DecodeResult()
    for rs in request.resource_spans:
        resource = _attributes(rs.resource.attributes, None)
        for ss in rs.scope_spans:
            scope = ss.scope.name
            for span in ss.spans:
                if len(span.trace_id) != 16 or not any(span.trace_id):
                    result.reject(f"{source}: span {span.name!r}: invalid trace_id")
                    continue
                if len(span.span_id) != 8 or not any(span.span_id):
                    result.reject(f"{source}: span {span.name!r}: invalid span_id")
                    continue
                parent = span.parent_span_id
                code = span.status.code
                result.spans.append(
                    SpanRecord(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=parent.hex() if len(parent) == 8 and any(parent) else None,
                        name=span.name,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        kind=span.kind,
                        status_code=StatusCode(code) if code in (0, 1, 2) else StatusCode.UNSET,
                        status_message=span.status.message,
                        attributes=_attributes(span.attributes, key_filter),
                        events=tuple(
                            SpanEvent(e.name, e.time_unix_nano, _attributes(e.attributes, None))
                            for e in span.events
                        ),
                        resource=resource,
                        scope=scope,
                    )
                )
    return result


def _attributes(kvs: Iterable[KeyValue], key_filter: KeyFilter) -> dict[str, AttrValue]:
    out: dict[str, AttrValue] = {}
    for kv in kvs:
        key = kv.key
        if key_filter is not None and not key_filter(key):
            continue
        out[key] = decode_any_value(kv.value)
    return out


def decode_any_value(value: AnyValue) -> AttrValue:
    """Decode a protobuf AnyValue into plain Python values."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return value.double_value
    if which == "array_value":
        return tuple(decode_any_value(v) for v in value.array_value.values)
    if which == "kvlist_value":
        return {kv.key: decode_any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value
    return None
