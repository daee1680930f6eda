"""span_has_key: a Span's attribute keys read off the wire, natively and by the Python twin."""

from __future__ import annotations

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.otlp.native import extension
from tracescore.otlp.span_keys import python_span_has_key
from tracescore.otlp.wire import len_field, varint

_native = extension()
TWINS = [python_span_has_key] + ([_native.span_has_key] if _native is not None else [])
KEYS = ("eval.tone.score", "tracescore.verdict", "")


def _span(*keys: str, value: str = "v") -> bytes:
    span = Span(name="invoke_agent bot", span_id=b"\x01" * 8)
    for key in keys:
        span.attributes.add(key=key).value.string_value = value
    span.status.code = span.status.STATUS_CODE_OK
    return span.SerializeToString()


def _kv(*fields: bytes) -> bytes:
    return len_field(b"\x4a", b"".join(fields))


@pytest.mark.parametrize("has_key", TWINS)
@pytest.mark.parametrize(
    ("span_bytes", "expected"),
    [
        (_span("gen_ai.agent.name"), False),
        (_span("gen_ai.agent.name", "tracescore.verdict"), True),
        (_span(), False),
        # A key's bytes inside a value, not a key: the search said maybe, the walk says no.
        (_span("gen_ai.agent.name", value="eval.tone.score"), False),
        (_span("eval.tone"), False),  # a prefix of a key is another key
        (_span("ééé", "eval.tone.score"), True),
        # A KeyValue without a key field has the empty key.
        (_span() + _kv(len_field(b"\x12", b"")), True),
        # Unusual shapes are not read: the caller's search decides.
        (_span() + _kv(len_field(b"\x0a", b"a"), len_field(b"\x0a", b"b")), None),
        (_span() + _kv(b"\x08\x01"), None),  # the key as a varint
        (_span() + b"\x48\x01", None),  # attributes not length-delimited
        (_span() + b"\x00\x01", None),  # field number 0
        (_span() + b"\x4a\x05ab", None),  # runs past the end
        (_span() + b"\x80\x80\x80\x80\x80\x01\x00", None),  # a tag over 32 bits
        # Unknown fields and groups are skipped.
        (_span("tracescore.verdict") + b"\xa3\x06" + b"\x08\x01" + b"\xa4\x06", True),
        (b"\xa3\x06\x08\x01\xa4\x06" + _span("x"), False),
    ],
)
def test_the_span_keys_are_read_off_the_wire(
    has_key: object, span_bytes: bytes, expected: bool | None
) -> None:
    assert callable(has_key)
    assert has_key(span_bytes, KEYS) is expected
    assert has_key(span_bytes, dict.fromkeys(KEYS, 1.0)) is expected


@pytest.mark.parametrize("has_key", TWINS)
def test_keys_that_are_not_text_give_no_answer(has_key: object) -> None:
    assert callable(has_key)
    assert has_key(_span("a"), ("a", 1)) is None
    assert has_key(_span("a"), ("\ud800",)) is None  # a lone surrogate has no UTF-8
    assert has_key(_span("a"), ()) is False


def test_a_long_key_and_many_attributes() -> None:
    key = "k" * 300  # a length of two varint bytes
    span_bytes = _span(*(f"key.{n}" for n in range(200)), key)
    for has_key in TWINS:
        assert has_key(span_bytes, (key,)) is True
        assert has_key(span_bytes, ("key.199", "zz")) is True
        assert has_key(span_bytes, ("key.200",)) is False
    assert varint(300) == b"\xac\x02"
