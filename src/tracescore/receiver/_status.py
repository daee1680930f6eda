"""google.rpc.Status and RetryInfo bodies, encoded by hand.

OTLP/HTTP failures carry a `google.rpc.Status` body and OTLP/gRPC back-pressure a `RetryInfo`
(opentelemetry-proto docs/specification.md). Both messages are three fields deep, so they are
written here with a few lines of wire encoding instead of adding googleapis-common-protos to the
receiver's imports; tests parse them back with the real generated classes.
"""

from __future__ import annotations

import json
import math

from tracescore.otlp.wire import len_field, varint

__all__ = [
    "INTERNAL",
    "INVALID_ARGUMENT",
    "RESOURCE_EXHAUSTED",
    "RETRY_INFO_TYPE_URL",
    "UNAUTHENTICATED",
    "UNAVAILABLE",
    "retry_info",
    "status_json",
    "status_proto",
]

# gRPC status codes (google.rpc.Code) used in Status.code.
INVALID_ARGUMENT = 3
RESOURCE_EXHAUSTED = 8
INTERNAL = 13
UNAVAILABLE = 14
UNAUTHENTICATED = 16
RETRY_INFO_TYPE_URL = "type.googleapis.com/google.rpc.RetryInfo"


def _field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value) if value else b""


def _field_bytes(number: int, value: bytes) -> bytes:
    return len_field(varint((number << 3) | 2), value) if value else b""


def retry_info(seconds: float) -> bytes:
    """A serialized google.rpc.RetryInfo asking the client to wait `seconds`."""
    whole = math.floor(seconds)
    nanos = round((seconds - whole) * 1e9)
    duration = _field_varint(1, whole) + _field_varint(2, nanos)
    return len_field(varint((1 << 3) | 2), duration)


def status_proto(code: int, message: str, retry_after_s: float | None = None) -> bytes:
    """A serialized google.rpc.Status; with `retry_after_s`, a RetryInfo in its details."""
    body = _field_varint(1, code) + _field_bytes(2, message.encode())
    if retry_after_s is not None:
        detail = _field_bytes(1, RETRY_INFO_TYPE_URL.encode()) + _field_bytes(
            2, retry_info(retry_after_s)
        )
        body += len_field(varint((3 << 3) | 2), detail)
    return body


def status_json(code: int, message: str) -> bytes:
    """The OTLP/JSON form of a google.rpc.Status (details left out)."""
    return json.dumps({"code": code, "message": message}).encode()
