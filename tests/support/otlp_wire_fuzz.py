"""Random protobuf wire bytes shaped by the OTLP trace descriptors, for differential tests.

`random_request` writes an ExportTraceServiceRequest field by field from the installed
descriptors (not from any schema of our own), mostly right and sometimes wrong in each way a
decoder must judge: unknown fields, known fields with another wire type, groups (nested,
mismatched, unclosed), invalid UTF-8 in strings and bytes, non-canonical, overlong and
truncated varints, tags of 5 and 6 bytes, field number 0, wire types 6 and 7, lengths off by
one, and chains of messages or groups around upb's depth limit of 100. `mutate` flips, cuts
and splices bytes of a valid request.
"""

from __future__ import annotations

import random

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = ["deep_request", "mutate", "random_request", "varint"]

_VARINT_TYPES = {
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_ENUM,
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
}
_WIRE_OF = {FieldDescriptor.TYPE_FIXED64: 1, FieldDescriptor.TYPE_DOUBLE: 1}
_WIRE_OF |= {FieldDescriptor.TYPE_FIXED32: 5, FieldDescriptor.TYPE_FLOAT: 5}
_TEXTS = ["", "ok", "gen_ai.tool.name", "héllo", "日本語", "emoji \U0001f600", "x" * 40]
# A lone continuation byte, overlong forms (C0, E0, F0), a surrogate, above U+10FFFF, F5 and
# up, a sequence cut short, a lead byte followed by ASCII.
_BAD_UTF8 = [b"\x80", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xf0\x8f\xbf\xbf"]
_BAD_UTF8 += [b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"ab\xe2\x82"]
_BAD_UTF8 += [b"\xe2a\x82"]
_EDGE_UTF8 = [b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xe0\xa0\x80", b"\xf0\x90\x80\x80"]


def varint(value: int, pad: int = 0) -> bytes:
    """`value` as a varint, with `pad` extra continuation bytes (a non-canonical encoding)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    if pad:
        out.append(value | 0x80)
        out += b"\x80" * (pad - 1) + b"\x00"
    else:
        out.append(value)
    return bytes(out)


def _tag(rng: random.Random, number: int, wire: int) -> bytes:
    roll = rng.random()
    if roll < 0.01:
        return varint((number << 3) | wire, pad=rng.randint(1, 6))  # 5 bytes is the most upb reads
    if roll < 0.012:
        return varint(0 << 3 | wire)
    return varint((number << 3) | wire)


def _length(rng: random.Random, payload: bytes) -> bytes:
    roll = rng.random()
    if roll < 0.005:
        return varint(len(payload) + rng.choice([-1, 1]) if payload else 1) + payload
    if roll < 0.01:
        return varint(len(payload), pad=rng.randint(1, 9)) + payload
    return varint(len(payload)) + payload


def _text(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.03:
        return rng.choice(_TEXTS).encode() + rng.choice(_BAD_UTF8) + rng.choice(_TEXTS).encode()
    if roll < 0.06:
        return rng.choice(_EDGE_UTF8) * rng.randint(1, 3)
    return rng.choice(_TEXTS).encode() * rng.randint(1, 3)


def _scalar(rng: random.Random, wire: int) -> bytes:
    if wire == 0:
        roll = rng.random()
        if roll < 0.01:
            return b"\xff" * rng.randint(10, 11) + b"\x01"  # 11 or 12 bytes: malformed
        if roll < 0.02:
            return b"\xff" * 9 + bytes([rng.randint(0, 0x7F)])  # 10 bytes, excess bits
        return varint(rng.choice([0, 1, 127, 128, 2**31, 2**63, 2**64 - 1]))
    if wire == 1:
        return rng.randbytes(8 if rng.random() > 0.005 else 7)
    if wire == 5:
        return rng.randbytes(4 if rng.random() > 0.005 else 3)
    return _length(rng, rng.randbytes(rng.randint(0, 6)))


def _group(rng: random.Random, number: int, depth: int) -> bytes:
    body = b"".join(_unknown(rng, depth + 1) for _ in range(rng.randint(0, 2)))
    roll = rng.random()
    if roll < 0.03:
        return _tag(rng, number, 3) + body  # never closed
    if roll < 0.06:
        return _tag(rng, number, 3) + body + _tag(rng, number + 1, 4)  # closed by another
    return _tag(rng, number, 3) + body + _tag(rng, number, 4)


def _unknown(rng: random.Random, depth: int) -> bytes:
    number = rng.choice([17, 18, 100, 2**29 - 1, rng.randint(1, 40)])
    wire = rng.choice([0, 1, 2, 5, 3] if depth < 110 else [0, 1, 2, 5])
    if rng.random() < 0.005:
        wire = rng.choice([4, 6, 7])
    if wire == 3:
        return _group(rng, number, depth)
    return _tag(rng, number, wire) + _scalar(rng, wire)


def _field(rng: random.Random, field: FieldDescriptor, depth: int) -> bytes:
    delimited = (
        FieldDescriptor.TYPE_MESSAGE,
        FieldDescriptor.TYPE_STRING,
        FieldDescriptor.TYPE_BYTES,
    )
    right = 2 if field.type in delimited else _WIRE_OF.get(field.type, 0)
    wire = right if rng.random() > 0.05 else rng.choice([0, 1, 2, 3, 5])
    if wire == 3:
        return _group(rng, field.number, depth)
    if wire != 2:
        return _tag(rng, field.number, wire) + _scalar(rng, wire)
    if field.type == FieldDescriptor.TYPE_MESSAGE and depth < 8:
        payload = _message(rng, field.message_type, depth + 1)
    elif field.type == FieldDescriptor.TYPE_STRING:
        payload = _text(rng)
    elif field.type == FieldDescriptor.TYPE_BYTES and rng.random() < 0.2:
        payload = rng.choice(_BAD_UTF8)
    else:
        payload = rng.randbytes(rng.randint(0, 4))
    return _tag(rng, field.number, 2) + _length(rng, payload)


def _message(rng: random.Random, descriptor: Descriptor, depth: int) -> bytes:
    parts = []
    for _ in range(rng.randint(0, 4 if depth < 4 else 2)):
        if rng.random() < 0.1:
            parts.append(_unknown(rng, depth))
        else:
            parts.append(_field(rng, rng.choice(descriptor.fields), depth))
    return b"".join(parts)


def deep_request(levels: int, groups: bool = False, inner: bytes = b"") -> bytes:
    """A request whose innermost message or, with `groups`, innermost unknown group is
    `levels` below it (upb allows 100). The innermost message holds `inner` when it is an
    AnyValue (an even number of levels), nothing when it is an ArrayValue."""
    if not groups:  # AnyValue -> ArrayValue -> AnyValue ... under a span attribute
        # resource_spans 1, scope_spans 2, spans 3, attributes 4, value 5 (an AnyValue)
        if (levels - 5) % 2:
            inner = b""
        for level in range(levels - 1, 4, -1):  # wrap the message below into this one
            field = b"\x2a" if (level - 5) % 2 == 0 else b"\x0a"  # array_value, values
            inner = field + varint(len(inner)) + inner
        kv = b"\x0a\x01k\x12" + varint(len(inner)) + inner
        span = b"\x4a" + varint(len(kv)) + kv
        scope_spans = b"\x12" + varint(len(span)) + span
        resource_spans = b"\x12" + varint(len(scope_spans)) + scope_spans
        return b"\x0a" + varint(len(resource_spans)) + resource_spans
    groups = levels - 1  # nested unknown groups inside one resource_spans
    body = b"\x3b" * groups + b"\x3c" * groups  # field 7, start and end
    return b"\x0a" + varint(len(body)) + body


def random_request(rng: random.Random) -> bytes:
    """One ExportTraceServiceRequest's bytes, valid or wrong in one of many ways."""
    if rng.random() < 0.05:
        inner = rng.choice([b"", b"\x0a\x01x", b"\x0a\x01\xff", b"\x2b\x2c"])
        return deep_request(rng.randint(97, 103), rng.random() < 0.3, inner)
    return _message(rng, ExportTraceServiceRequest.DESCRIPTOR, 0)


def mutate(rng: random.Random, body: bytes) -> bytes:
    """`body` with 1-4 bytes flipped, runs cut or bytes inserted."""
    out = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out) or 1)
        action = rng.choice(["flip", "bit", "cut", "insert", "truncate"])
        if action == "flip" and out:
            out[at] = rng.randrange(256)
        elif action == "bit" and out:
            out[at] ^= 1 << rng.randrange(8)
        elif action == "cut":
            del out[at : at + rng.randint(1, 16)]
        elif action == "insert":
            out[at:at] = rng.randbytes(rng.randint(1, 8))
        else:
            del out[at:]
    return bytes(out)
