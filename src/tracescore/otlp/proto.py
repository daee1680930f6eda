"""OTLP protobuf ExportTraceServiceRequest to SpanRecords.

Requests are validated with the full OTLP schema, then read by `otlp.scan`, which with a key
filter decodes only the attributes trajectories need. Validating is upb's parse, or where the
native extension is built, its `validate_request`: the same verdict without building (and
freeing) a message nobody reads.
"""

from __future__ import annotations

from collections.abc import Callable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore.errors import InputError
from tracescore.otlp.decode import DecodeResult, KeyFilter
from tracescore.otlp.grouping import Grouped
from tracescore.otlp.native import extension
from tracescore.otlp.scan import SpanReader, decode_any_value

__all__ = [
    "check_and_group",
    "check_proto_request",
    "decode_any_value",
    "decode_proto_request",
    "parse_proto_request",
]

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


def check_proto_request(body: bytes, source: str = "request") -> None:
    """Refuse what `parse_proto_request` refuses, with InputError naming what is wrong and
    where when the native validator runs (`otlp._validate.c`), without parsing otherwise."""
    if _validate_request is None:
        parse_proto_request(body, source)
        return
    problem = _validate_request(body)
    if problem is not None:
        raise InputError(f"{source}: not an OTLP ExportTraceServiceRequest: {problem}")


def check_and_group(reader: SpanReader, body: bytes, source: str = "request") -> Grouped:
    """`check_proto_request(body, source)`, then `reader.grouped(body)`, in one walk of the
    bytes where the native scanner can vouch for them (`SpanReader.checked_grouped`): the
    same verdict, the same InputError, the same groups. The refusal is decided before
    anything is returned, so nothing of a refused request is taken; only the reader's caches
    may have seen its keys, as with any scan. Scan errors raise as `grouped`'s do."""
    grouped = reader.checked_grouped(body)
    if grouped is None:  # not vouched for: the validator's verdict, then the plain scan
        check_proto_request(body, source)
        grouped = reader.grouped(body)
    return grouped


def decode_proto_request(
    request: ExportTraceServiceRequest | bytes,
    source: str = "request",
    key_filter: KeyFilter = None,
) -> DecodeResult:
    """Decode a request; spans with invalid ids are rejected and counted."""
    if isinstance(request, bytes):
        body = request
        check_proto_request(body, source)  # the full schema refuses what is not OTLP
    else:
        body = request.SerializeToString()
    result = DecodeResult()
    append = result.spans.append
    reader = SpanReader(key_filter)
    try:
        spans = reader.records(body)
    except Exception as exc:  # the schema check accepted it: the scanner cannot read it
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


# Without the extension, upb's parse decides.
_validate_request: Callable[[bytes], str | None] | None = None
if (_native := extension()) is not None:
    _validate_request = _native.validate_request
