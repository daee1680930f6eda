"""Protobuf wire-format primitives shared by everything that reads or writes OTLP bytes by hand.

The scanner (otlp/scan.py), the assembler's cut of held spans (assembler/_wire.py), the bytes
tracescore emits (export/wire.py) and the receivers' gRPC status details all read or write
varints and length-delimited fields; one implementation serves them all.
"""

from __future__ import annotations

__all__ = ["GROUP_DEPTH_LIMIT", "WireError", "len_field", "read_varint", "skip_group", "varint"]

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


GROUP_DEPTH_LIMIT = 100  # upb's depth limit, which counts groups


def skip_group(buf: bytes, pos: int, end: int, number: int) -> int:
    """The position after the end-group tag of group `number`, whose start tag ends at `pos`
    (fields inside skipped as upb skips an unknown group); WireError when malformed."""
    open_groups = [number]
    while pos < end:
        tag, pos = read_varint(buf, pos)
        inner, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = read_varint(buf, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            pos += length
        elif wire == 3:
            if len(open_groups) == GROUP_DEPTH_LIMIT:
                raise WireError("groups nested more than 100 deep")
            open_groups.append(inner)
        elif wire == 4:
            if inner != open_groups.pop():
                raise WireError(f"end-group tag {inner} does not close its group")
            if not open_groups:
                return pos
        else:
            raise WireError(f"invalid wire type {wire} in field {inner}")
        if pos > end:
            break
    raise WireError(f"group {number} runs past the end of its message")


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
