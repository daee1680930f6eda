"""KeyValues and AnyValues in every encoding upb accepts, read alike by both scanners and upb.

The native scanner reads the usual encoding (key, then one value filling the rest) without its
general field reader and everything else with it, or through upb: each shape below takes one
of those paths, and all must give what upb gives. Built as raw bytes, since upb re-encodes a
message it parsed in the usual shape.
"""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.otlp import scan
from tracescore.otlp.native import disabled as native_disabled
from tracescore.otlp.scan import SpanReader, decode_any_value


def _varint(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _string(text: str) -> bytes:
    return _field(1, text.encode())


KEY_VALUES = [
    _field(1, b"plain") + _field(2, _string("x")),
    _field(1, b"key only"),
    _field(1, b"empty value") + _field(2, b""),
    _field(2, _string("v")) + _field(1, b"value first"),
    _field(1, b"two values") + _field(2, _string("p")) + _field(2, _string("q")),
    _field(1, b"two strings") + _field(2, _string("x") + _string("y")),
    _field(1, b"string then int") + _field(2, _string("x") + b"\x18\x05"),
    _field(1, b"long tag") + _field(2, b"\x8a\x00\x01z"),
    _field(1, b"unknown field") + _field(2, _string("u")) + b"\x18\x07",
    _field(1, b"two keys") + _field(1, b"second key") + _field(2, _string("w")),
    _field(1, b"k" * 200) + _field(2, _string("long key")),
    _field(1, b"long value") + _field(2, _string("é" * 150)),
    _field(1, b"int") + _field(2, b"\x18" + _varint(2**64 - 5)),
    _field(1, b"bool") + _field(2, b"\x10\x01"),
    _field(1, b"string past its value") + _field(2, b"\x0a\x05ab"),
]


def _request(*key_values: bytes) -> bytes:
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s").SerializeToString()
    span += b"".join(_field(9, kv) for kv in key_values)
    return _field(1, _field(2, _field(2, span)))


def test_every_encoding_reads_as_upb_reads_it() -> None:
    for kv in KEY_VALUES:
        body = _request(kv)
        try:
            span = ExportTraceServiceRequest.FromString(body).resource_spans[0].scope_spans[0]
        except Exception:
            for read in (SpanReader().records, SpanReader().python_records):
                with pytest.raises(Exception):  # noqa: B017, PT011 - ValueError or DecodeError
                    read(body)
            continue
        expected = {kv.key: decode_any_value(kv.value) for kv in span.spans[0].attributes}
        native, python = SpanReader().records(body), SpanReader().python_records(body)
        assert native == python, kv
        assert native[0][6].attributes == expected, kv


def test_the_encodings_together_in_one_span() -> None:
    body = _request(*KEY_VALUES[:-1])
    native = SpanReader().records(body)
    assert native == SpanReader().python_records(body)
    attributes = native[0][6].attributes
    assert attributes["plain"] == "x"
    assert attributes["key only"] is None
    assert attributes["two values"] == "q"
    assert attributes["two strings"] == "y"
    assert attributes["string then int"] == 5
    assert attributes["long tag"] == "z"
    assert attributes["second key"] == "w"
    assert attributes["long value"] == "é" * 150
    assert attributes["int"] == -5
    assert scan.NATIVE or native_disabled()  # built in CI: both readers compared


def test_an_attribute_longer_than_its_span_is_refused() -> None:
    # The span ends one byte inside its last attribute and that attribute's value; the next
    # span's bytes follow on the wire, so a read past the span's end would find one there.
    value = _string("x")
    kv = _field(1, b"plain") + b"\x12" + _varint(len(value) + 1) + value
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s").SerializeToString()
    cut = span + b"\x4a" + _varint(len(kv) + 1) + kv
    body = _field(1, _field(2, _field(2, cut) + _field(2, span)))
    with pytest.raises(Exception):  # noqa: B017, PT011 - upb's DecodeError
        ExportTraceServiceRequest.FromString(body)
    for read in (SpanReader().records, SpanReader().python_records, SpanReader().grouped):
        with pytest.raises(ValueError, match="malformed"):
            read(body)
