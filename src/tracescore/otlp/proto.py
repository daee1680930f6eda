"""OTLP protobuf ExportTraceServiceRequest to SpanRecords.

Requests are validated with the full OTLP schema, then read by `otlp.scan`, which with a key
filter decodes only the attributes trajectories need.
"""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore.errors import InputError
from tracescore.otlp.decode import DecodeResult, KeyFilter
from tracescore.otlp.scan import SpanReader, decode_any_value

__all__ = ["decode_any_value", "decode_proto_request", "parse_proto_request"]

_ZERO16 = bytes(16)
_ZERO8 = bytes(8)


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
        body = request
        parse_proto_request(body, source)  # the full schema refuses what is not OTLP
    else:
        body = request.SerializeToString()
    result = DecodeResult()
    append = result.spans.append
    reader = SpanReader(key_filter)
    try:
        spans = reader.records(body)
    except Exception as exc:  # the full parse accepted it: the scanner cannot read it
        raise InputError(f"{source}: unreadable OTLP request: {exc}") from exc
    for _, _, _, trace_id, span_id, _, record, _ in spans:
        if len(trace_id) != 16 or trace_id == _ZERO16:
            result.reject(f"{source}: span {record.name!r}: invalid trace_id")
            continue
        if len(span_id) != 8 or span_id == _ZERO8:
            result.reject(f"{source}: span {record.name!r}: invalid span_id")
            continue
        append(record)
    return result
