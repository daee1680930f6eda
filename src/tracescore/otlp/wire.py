"""Protobuf wire-format primitives shared by everything that reads or writes OTLP bytes by hand.

The scanner (otlp/scan.py), the assembler's cut of held spans (assembler/_wire.py), the bytes
tracescore emits (export/wire.py) and the receivers' gRPC status details all read or write
varints and length-delimited fields; one implementation serves them all.
"""

from __future__ import annotations

__all__ = ["WireError", "len_field", "read_varint", "varint"]

_BYTES = [bytes((i,)) for i in range(0x80)]
_CONTINUED = [bytes((i | 0x80,)) for i in range(0x80)]  # a varint byte with more to come


class WireError(ValueError):
    """The bytes are not well-formed protobuf."""


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it; WireError when truncated or too long."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise WireError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError("varint longer than 10 bytes")


def varint(value: int) -> bytes:
    """The base-128 varint of a non-negative integer below 2**64."""
    if value < 0x80:
        return _BYTES[value]
    if value < 0x4000:  # most lengths: two bytes, no loop
        return _CONTINUED[value & 0x7F] + _BYTES[value >> 7]
    groups = []
    while value >= 0x80:
        groups.append(value & 0x7F | 0x80)
        value >>= 7
    groups.append(value)
    return bytes(groups)


def len_field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field (string, bytes or message); `tag` is its encoded tag."""
    size = len(payload)
    if size < 0x80:
        return tag + _BYTES[size] + payload
    if size < 0x4000:
        return b"".join((tag, _CONTINUED[size & 0x7F], _BYTES[size >> 7], payload))
    return tag + varint(size) + payload
