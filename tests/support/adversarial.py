"""Hostile OTLP/protobuf request bodies, encoded by hand so a 512k-span body takes a second.

Each builder returns the bytes of an ExportTraceServiceRequest that upb accepts (unless its
name says otherwise) and that is hard on one part of the service: hash tables fed by
client-chosen keys, caches fed by client-chosen strings, nesting, groups, odd field orders.
The unit tests (tests/adversarial/test_native_edges.py) and the corpus run against the real
`tracescore serve` (tests/adversarial/test_serve_corpus.py) share them.
"""

from __future__ import annotations

import random
import struct

__all__ = [
    "colliding_trace_ids",
    "field",
    "key_value",
    "request",
    "resource_spans",
    "scope_spans",
    "span",
    "span_per_trace",
    "string_value",
    "varint",
]

_M64 = (1 << 64) - 1
# The multipliers of the unkeyed hash the scanner used before (first and last 8 bytes of a
# trace id, each multiplied, xor-ed with the length, then a bijective mix).
_FIRST = 0x9E3779B97F4A7C15
_LAST = 0xC2B2AE3D27D4EB4F
_LAST_INVERSE = pow(_LAST, -1, 1 << 64)


def varint(value: int) -> bytes:
    out = bytearray()
    value &= _M64
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def string_value(text: bytes) -> bytes:
    """An AnyValue holding a string."""
    return field(1, text)


def key_value(key: bytes, value: bytes | None = None) -> bytes:
    """A KeyValue; `value` is an encoded AnyValue."""
    return field(1, key) + (b"" if value is None else field(2, value))


def span(
    trace_id: bytes,
    span_id: bytes,
    name: bytes = b"s",
    attributes: tuple[bytes, ...] = (),
    parent: bytes = b"",
    extra: bytes = b"",
) -> bytes:
    """A Span; `attributes` are encoded KeyValues, `extra` raw fields appended as they are."""
    body = field(1, trace_id) + field(2, span_id)
    if parent:
        body += field(4, parent)
    body += field(5, name) + b"\x39" + struct.pack("<Q", 1) + b"\x41" + struct.pack("<Q", 2)
    body += b"".join(field(9, kv) for kv in attributes)
    return body + extra


def scope_spans(spans: list[bytes], scope_name: bytes = b"scope") -> bytes:
    return field(1, field(1, scope_name)) + b"".join(field(2, s) for s in spans)


def resource_spans(scopes: list[bytes], resource: bytes = b"") -> bytes:
    return field(1, resource) + b"".join(field(2, s) for s in scopes)


def request(resources: list[bytes]) -> bytes:
    return b"".join(field(1, r) for r in resources)


def colliding_trace_ids(count: int, seed: int = 1) -> list[bytes]:
    """`count` distinct valid trace ids that all hashed alike under the former unkeyed hash:
    for any first half, the second half solved so both halves' products xor to one value."""
    rng = random.Random(seed)
    target = rng.getrandbits(64)
    ids = []
    for _ in range(count):
        first = rng.getrandbits(64) | 1
        last = ((target ^ (first * _FIRST & _M64)) * _LAST_INVERSE) & _M64
        ids.append(struct.pack("<QQ", first, last))
    return ids


def random_trace_ids(count: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.getrandbits(128).to_bytes(16, "little") or b"\x01" * 16 for _ in range(count)]


def span_per_trace(trace_ids: list[bytes], attributes: tuple[bytes, ...] = ()) -> bytes:
    """One request with one span in each of `trace_ids` (one resource, one scope)."""
    spans = [
        span(tid, (n + 1).to_bytes(8, "big"), b"op", attributes) for n, tid in enumerate(trace_ids)
    ]
    return request([resource_spans([scope_spans(spans)])])
