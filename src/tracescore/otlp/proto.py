"""OTLP protobuf ExportTraceServiceRequest to SpanRecords.

Reading attributes off upb messages costs about 1 µs each (reference/performance.md), so the
receiver passes a key filter and only the keys trajectories need are decoded.
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.errors import InputError
from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.otlp.decode import DecodeResult, KeyFilter

__all__ = ["decode_any_value", "decode_proto_request", "parse_proto_request", "span_record"]


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
    append = result.spans.append
    # The key test runs once per distinct key, not once per attribute: keys repeat on every
    # span, and a Python call per attribute costs as much as reading it.
    kept: dict[str, bool] | None = {} if key_filter is not None else None
    for rs in request.resource_spans:
        resource = _attributes(rs.resource.attributes, None, None)
        for ss in rs.scope_spans:
            scope = ss.scope.name
            for span in ss.spans:
                trace_id = span.trace_id
                span_id = span.span_id
                if len(trace_id) != 16 or trace_id == _ZERO16:
                    result.reject(f"{source}: span {span.name!r}: invalid trace_id")
                    continue
                if len(span_id) != 8 or span_id == _ZERO8:
                    result.reject(f"{source}: span {span.name!r}: invalid span_id")
                    continue
                append(
                    span_record(
                        span,
                        trace_id.hex(),
                        _attributes(span.attributes, key_filter, kept),
                        resource,
                        scope,
                    )
                )
    return result


_ZERO16 = bytes(16)
_ZERO8 = bytes(8)
_STATUS = {0: StatusCode.UNSET, 1: StatusCode.OK, 2: StatusCode.ERROR}


def span_record(
    span: Span,
    trace_id: str,
    attributes: dict[str, AttrValue],
    resource: dict[str, AttrValue],
    scope: str,
    name: str | None = None,
) -> SpanRecord:
    """A SpanRecord of a protobuf span whose ids were checked and attributes already decoded.

    `name` lets a caller pass an interned copy of `span.name`.
    """
    parent = span.parent_span_id
    # Most spans carry no status: HasField is cheaper than reading the empty sub-message.
    if span.HasField("status"):
        status = span.status
        code = _STATUS.get(status.code, StatusCode.UNSET)
        message = status.message
    else:
        code, message = StatusCode.UNSET, ""
    events: tuple[SpanEvent, ...] = ()
    if len(span.events):
        events = tuple(
            SpanEvent(e.name, e.time_unix_nano, _attributes(e.attributes, None, None))
            for e in span.events
        )
    return SpanRecord(
        trace_id,
        span.span_id.hex(),
        parent.hex() if len(parent) == 8 and parent != _ZERO8 else None,
        span.name if name is None else name,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        span.kind,
        code,
        message,
        attributes,
        events,
        resource,
        scope,
    )


def _attributes(
    kvs: Iterable[KeyValue], key_filter: KeyFilter, kept: dict[str, bool] | None
) -> dict[str, AttrValue]:
    out: dict[str, AttrValue] = {}
    for kv in kvs:
        key = kv.key
        if key_filter is not None:
            assert kept is not None
            keep = kept.get(key)
            if keep is None:
                keep = kept[key] = key_filter(key)
            if not keep:
                continue
        value = kv.value
        # Non-empty strings are the common case; an empty string is also every other kind's
        # default, so only then is the kind asked.
        text = value.string_value
        out[key] = text if text else decode_any_value(value)
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
