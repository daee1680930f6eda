"""The journal's record kinds and their payloads (little-endian, fixed headers, then bytes).

- `REQUEST`: an accepted request as received, with the spans the assembler held out of it
  (their index, trace id and span id) and whether the rest was forwarded.
- `RELEASED`: a held span as it was released, score attributes added (so a restart sends it
  as scored, without scoring its run again).
- `SETTLED`: parts that left for good: delivered downstream, or dropped for a permanent cause.
  Part 0 of a request is its forwarded rest; part k >= 1 its k-th held span.
- `RETIRED`: requests nothing needs any more (every part settled, every trace scored).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "RELEASED",
    "REQUEST",
    "RETIRED",
    "SETTLED",
    "HeldSpan",
    "Request",
    "decode_ids",
    "decode_keys",
    "decode_released",
    "decode_request",
    "encode_ids",
    "encode_keys",
    "encode_released",
    "encode_request",
]

REQUEST = 1
RELEASED = 2
SETTLED = 3
RETIRED = 4

_REQUEST = struct.Struct("<QBH")  # request id, forwarded, held spans
_HELD = struct.Struct("<III16s8s")  # resource, scope and span index; trace id; span id
_COUNT = struct.Struct("<I")
_KEY = struct.Struct("<QH")  # request id, part
_ID = struct.Struct("<Q")
_RELEASED = struct.Struct("<QHIII")  # request id, part, lengths of the three byte strings


@dataclass(frozen=True, slots=True)
class HeldSpan:
    """A span the assembler held out of a request: where it was, and whose it is."""

    index: tuple[int, int, int]
    trace_id: bytes
    span_id: bytes


@dataclass(frozen=True, slots=True)
class Request:
    """A `REQUEST` record."""

    rid: int
    forwarded: bool
    held: tuple[HeldSpan, ...]
    body: bytes


def encode_request(
    rid: int, forwarded: bool, held: Sequence[HeldSpan], body: bytes
) -> tuple[bytes, bytes]:
    """The record's index and the body, as two parts (the body is never copied)."""
    parts = [_REQUEST.pack(rid, forwarded, len(held))]
    parts.extend(_HELD.pack(*h.index, h.trace_id, h.span_id) for h in held)
    return b"".join(parts), body


def decode_request(payload: bytes) -> Request:
    rid, forwarded, n = _REQUEST.unpack_from(payload, 0)
    pos = _REQUEST.size
    held = []
    for _ in range(n):
        i, j, k, trace_id, span_id = _HELD.unpack_from(payload, pos)
        held.append(HeldSpan((i, j, k), trace_id, span_id))
        pos += _HELD.size
    return Request(rid, bool(forwarded), tuple(held), payload[pos:])


def encode_keys(keys: Sequence[tuple[int, int]]) -> bytes:
    return _COUNT.pack(len(keys)) + b"".join(_KEY.pack(rid, part) for rid, part in keys)


def decode_keys(payload: bytes) -> list[tuple[int, int]]:
    (n,) = _COUNT.unpack_from(payload, 0)
    return [_KEY.unpack_from(payload, _COUNT.size + i * _KEY.size) for i in range(n)]


def encode_ids(ids: Sequence[int]) -> bytes:
    return _COUNT.pack(len(ids)) + b"".join(_ID.pack(rid) for rid in ids)


def decode_ids(payload: bytes) -> list[int]:
    (n,) = _COUNT.unpack_from(payload, 0)
    return [_ID.unpack_from(payload, _COUNT.size + i * _ID.size)[0] for i in range(n)]


def encode_released(key: tuple[int, int], held: tuple[bytes, bytes, bytes]) -> bytes:
    rs, ss, span = held
    return _RELEASED.pack(*key, len(rs), len(ss), len(span)) + rs + ss + span


def decode_released(payload: bytes) -> tuple[tuple[int, int], tuple[bytes, bytes, bytes]]:
    rid, part, a, b, c = _RELEASED.unpack_from(payload, 0)
    pos = _RELEASED.size
    rs, ss, span = payload[pos : pos + a], payload[pos + a : pos + a + b], payload[pos + a + b :]
    if len(span) != c:
        raise ValueError(f"released span of request {rid} has {len(span)} bytes, not {c}")
    return (rid, part), (rs, ss, span)
