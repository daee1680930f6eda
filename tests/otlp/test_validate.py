"""The native request validator gives upb's verdict, and says what is wrong and where.

The receivers check protobuf bodies with `otlp.proto.check_proto_request` instead of parsing
them with upb (nothing reads the parsed message); the scanner relies on what upb would accept,
so the two must agree exactly: on the schema (every string field is UTF-8 checked, nothing
else), on the wire-format corners probed here, and on thousands of fuzzed requests.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from support.otlp_proto import request_bodies
from support.otlp_wire_fuzz import deep_request, mutate, random_request, varint
from tracescore.errors import InputError
from tracescore.otlp import native, proto, scan

TESTDATA = Path(__file__).parents[1] / "testdata"
SAMPLES = [
    body
    for path in sorted((TESTDATA / "frameworks").glob("*.otlp.json"))[:6]
    for body in request_bodies(path)
]
# A marker set in one field, then overwritten in the bytes by as many invalid UTF-8 bytes.
_MARK = "\x01mark\x01"
_BAD = b"\xff" * len(_MARK)

validate: Any = None
if scan.NATIVE:
    from tracescore.otlp._scan import validate_request as validate  # type: ignore[import-not-found]


@pytest.fixture(autouse=True)
def _native_is_built() -> None:
    # CI has a C compiler: a missing build is a failure here, not a silent skip (but for the
    # pure-Python run, TRACESCORE_NATIVE=0, where every test here is about the extension).
    if native.disabled():
        pytest.skip(f"{native.ENV}=0: the suite runs on the pure-Python path")
    assert scan.NATIVE, "tracescore.otlp._scan is not built"


def upb_accepts(body: bytes) -> bool:
    try:
        ExportTraceServiceRequest().ParseFromString(body)
    except Exception:  # DecodeError, sometimes RuntimeError
        return False
    return True


def _agree(body: bytes) -> None:
    verdict = validate(body)
    assert upb_accepts(body) == (verdict is None), (body.hex(), verdict)


def _paths(
    descriptor: Descriptor, path: tuple[tuple[FieldDescriptor, str], ...] = ()
) -> Iterator[tuple[tuple[FieldDescriptor, str], ...]]:
    """Every path from the request to a string or bytes field, each message type at most twice
    a path (AnyValue holds ArrayValue holds AnyValue...)."""
    seen = [f.containing_type.full_name for f, _ in path]
    for field in descriptor.fields:
        name = f"{field.name}[0]" if field.is_repeated else field.name
        step = (*path, (field, name))
        if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
            yield step
        elif (
            field.type == FieldDescriptor.TYPE_MESSAGE
            and seen.count(field.message_type.full_name) < 2
        ):
            yield from _paths(field.message_type, step)


def _request_with_marker(path: tuple[tuple[FieldDescriptor, str], ...]) -> bytes:
    request = ExportTraceServiceRequest()
    node: Message = request
    for field, _ in path[:-1]:
        holder = getattr(node, field.name)
        node = holder.add() if field.is_repeated else holder
    last = path[-1][0]
    value: Any = _MARK if last.type == FieldDescriptor.TYPE_STRING else _MARK.encode()
    if last.is_repeated:
        getattr(node, last.name).append(value)
    else:
        setattr(node, last.name, value)
    body = request.SerializeToString()
    assert body.count(_MARK.encode()) == 1
    return body.replace(_MARK.encode(), _BAD)


PATHS = list(_paths(ExportTraceServiceRequest.DESCRIPTOR))


@pytest.mark.parametrize("path", PATHS, ids=[".".join(n for _, n in p) for p in PATHS])
def test_every_string_field_of_the_installed_schema_is_utf8_checked_and_no_bytes_field(
    path: tuple[tuple[FieldDescriptor, str], ...],
) -> None:
    # The native schema is a table in _validate.c: this holds it to the installed descriptors,
    # field by field, and checks each problem is named by its path.
    body = _request_with_marker(path)
    where = ".".join(name for _, name in path)
    if path[-1][0].type == FieldDescriptor.TYPE_STRING:
        assert not upb_accepts(body)
        assert validate(body) == f"{where}: invalid UTF-8 (byte {body.index(_BAD) - 2})"
    else:
        assert upb_accepts(body)
        assert validate(body) is None


def test_the_schema_reaches_every_kind_of_field() -> None:
    names = {".".join(n for _, n in p) for p in PATHS}
    assert "resource_spans[0].scope_spans[0].spans[0].status.message" in names
    assert "resource_spans[0].resource.entity_refs[0].id_keys[0]" in names
    assert "resource_spans[0].scope_spans[0].spans[0].events[0].attributes[0].key" in names
    assert "resource_spans[0].resource.attributes[0].value.kvlist_value.values[0].key" in names
    assert len(names) > 40


def _ld(number: int, payload: bytes, pad: int = 0) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload), pad) + payload


def _group(number: int, content: bytes) -> bytes:
    return varint(number << 3 | 3) + content + varint(number << 3 | 4)


def _in_resource_spans(content: bytes) -> bytes:
    return _ld(1, content)


def _deep_key_value(wraps: int, innermost: bytes) -> bytes:
    """A span attribute whose value is a kvlist holding a KeyValue whose value is a kvlist...
    `wraps` times, around the KeyValue payload `innermost` (at level 4 + 3 * wraps)."""
    kv = innermost
    for _ in range(wraps):
        kv = b"\x0a\x01k" + _ld(2, _ld(6, _ld(1, kv)))  # value.kvlist_value.values
    return _ld(1, _ld(2, _ld(2, _ld(9, kv))))  # resource_spans.scope_spans.spans.attributes


# (bytes, whether upb accepts them): each pins one corner of upb's decoder.
CORNERS = [
    # Attributes in the usual encoding are checked without walking them (plain_key_value):
    # the depth limit, non-ASCII keys and values, and every value kind still get upb's verdict.
    (_deep_key_value(31, b"\x0a\x01k\x12\x03\x0a\x01v"), True),  # the value at level 98
    (_deep_key_value(32, b"\x0a\x01k\x12\x03\x0a\x01v"), False),  # at level 101
    (_deep_key_value(32, b"\x0a\x01k\x12\x00"), False),  # even an empty value counts
    (_deep_key_value(32, b"\x0a\x01k"), True),  # no value: the KeyValue is at level 100
    (_deep_key_value(0, b"\x0a\x02\xc3\xa9\x12\x03\x0a\x01v"), True),  # a UTF-8 key
    (_deep_key_value(0, b"\x0a\x02\xc3\x28\x12\x03\x0a\x01v"), False),  # invalid
    (_deep_key_value(0, b"\x0a\x01k\x12\x04\x0a\x02\xc3\x28"), False),  # invalid value
    (_deep_key_value(0, b"\x0a\x01k\x12\x02\x10\x01"), True),  # bool
    (_deep_key_value(0, b"\x0a\x01k\x12\x03\x18\xff\x01"), True),  # int
    (_deep_key_value(0, b"\x0a\x01k\x12\x09\x21" + b"\x00" * 8), True),  # double
    (_deep_key_value(0, b"\x0a\x01k\x12\x08\x21" + b"\x00" * 7), False),  # cut short
    (_deep_key_value(0, b"\x0a\x01k\x12\x02\x18\xff"), False),  # a varint cut short
    (_deep_key_value(0, b"\x0a\x01k\x12\x03\x0a\x02v"), False),  # a string past its value
    (_deep_key_value(0, b"\x0a\x01k\x12\x04\x0a\x01v\x10"), False),  # a tag cut short
    (_deep_key_value(0, b"\x0a\x01k\x12\x05\x0a\x01v\x10\x01"), True),  # two values
    (_deep_key_value(0, b"\x0a\x01k\x12\x02\x3a\x00\x0a\x01j"), True),  # bytes, 2 keys
    (_ld(1, b"", pad=4), True),  # a length of 5 bytes
    (_ld(1, b"", pad=5), False),  # 6 bytes: upb reads lengths as 32-bit varints
    (_in_resource_spans(_ld(3, b"x", pad=5)), False),
    (varint(0x0A, pad=4) + b"\x00", True),  # a tag of 5 bytes
    (varint(0x0A, pad=5) + b"\x00", False),  # 6 bytes
    (bytes([0x88, 0x80, 0x80, 0x80, 0x10, 0x00]), False),  # a tag above 32 bits
    (b"\x10" + b"\xff" * 9 + b"\x7f", True),  # a varint of 10 bytes, excess bits ignored
    (b"\x10" + b"\xff" * 10 + b"\x01", False),  # 11 bytes
    (b"\x00\x00", False),  # field number 0 in a message
    (_in_resource_spans(b"\x00\x01"), False),
    (_group(9, b"\x00\x01"), True),  # field number 0 inside a group: upb takes it
    (_group(9, b"\x03\x04"), True),  # even a group numbered 0
    (_group(9, b"\x04"), False),  # ended by another number
    (_group(9, b"\x0e"), False),  # wire type 6
    (b"\x0f", False),  # wire type 7
    (b"\x2c", False),  # an end-group tag with nothing open
    (varint(5 << 3 | 3), False),  # a group never closed
    (_in_resource_spans(varint(9 << 3 | 3)) + varint(9 << 3 | 4), False),  # closed outside
    (_in_resource_spans(_group(1, b"")), True),  # a message field sent as a group: unknown
    (_in_resource_spans(b"\x18\x01"), True),  # a string field sent as a varint: unknown
    (_in_resource_spans(_ld(9, b"\xff")), True),  # unknown fields are not UTF-8 checked
    (_in_resource_spans(_ld(3, b"\xed\xa0\x80")), False),  # a surrogate
    (_in_resource_spans(_ld(3, b"\xc0\x80")), False),  # an overlong NUL
    (_in_resource_spans(_ld(3, b"\xe0\x9f\xbf")), False),  # overlong in 3 bytes
    (_in_resource_spans(_ld(3, b"\xf0\x8f\xbf\xbf")), False),  # overlong in 4 bytes
    (_in_resource_spans(_ld(3, b"\xe0\xa0\x80\xf0\x90\x80\x80")), True),  # the lowest
    (_in_resource_spans(_ld(3, b"\xf4\x90\x80\x80")), False),  # above U+10FFFF
    (_in_resource_spans(_ld(3, b"\xf4\x8f\xbf\xbf\xef\xbf\xbf")), True),  # the highest
    (_in_resource_spans(_ld(3, "ascii then é".encode() * 3)), True),
    (_in_resource_spans(_ld(3, b"abcdefgh\xe2\x82")), False),  # cut short after 8 ASCII
    # Short strings are read as a word reaching past one of their ends: only their own bytes
    # may decide, before other fields' bytes and at the end of the body.
    (_in_resource_spans(_ld(3, b"ab") + _ld(9, b"\xff" * 8)), True),
    (_in_resource_spans(_ld(9, b"\xff" * 8) + _ld(3, b"ab")), True),
    (_in_resource_spans(_ld(3, b"a\xff") + _ld(9, b"x" * 8)), False),
    (_in_resource_spans(_ld(9, b"x" * 8) + _ld(3, b"a\xff")), False),
    (_in_resource_spans(_ld(9, b"x" * 8) + _ld(3, b"\xffa")), False),
    (_in_resource_spans(b"\x09" + b"\x00" * 7), False),  # a fixed64 cut short
    (_in_resource_spans(b"\x0d" + b"\x00" * 3), False),  # a fixed32 cut short
    (_ld(1, b"\x1a\x05ab"), False),  # a length past the end of its message
    (deep_request(100), True),  # 100 messages below the request
    (deep_request(101), False),
    (deep_request(101, inner=b"\x0a\x01x"), False),
    (deep_request(100, groups=True), True),  # groups count too
    (deep_request(101, groups=True), False),
]


@pytest.mark.parametrize(("body", "accepted"), CORNERS, ids=[c[0].hex()[:40] for c in CORNERS])
def test_wire_format_corners_get_upb_verdict(body: bytes, accepted: bool) -> None:
    assert upb_accepts(body) == accepted  # what upb does (a protobuf upgrade may change it)
    assert (validate(body) is None) == accepted


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**64))
def test_generated_requests_get_upb_verdict(seed: int) -> None:
    _agree(random_request(random.Random(seed)))


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**64), st.sampled_from(range(len(SAMPLES))))
def test_mutated_requests_get_upb_verdict(seed: int, sample: int) -> None:
    _agree(mutate(random.Random(seed), SAMPLES[sample]))


def test_fuzzing_covers_both_verdicts_and_every_sample_is_accepted() -> None:
    rng = random.Random(0)
    verdicts = [validate(random_request(rng)) is None for _ in range(500)]
    assert 100 < sum(verdicts) < 400
    assert all(validate(body) is None for body in SAMPLES)


def test_the_problem_is_named_with_its_path_and_byte() -> None:
    spans = [_ld(5, b"ok")] * 3 + [_ld(5, b"bad \xff")]
    scope_spans = _ld(2, b"") + _ld(2, b"".join(_ld(2, span) for span in spans))
    body = _ld(1, b"") + _ld(1, scope_spans)
    problem = validate(body)
    at = body.index(b"\x2a\x05bad")
    assert problem == f"resource_spans[1].scope_spans[1].spans[3].name: invalid UTF-8 (byte {at})"
    assert validate(_ld(1, _ld(2, b"\x08"))) == (
        "resource_spans[0].scope_spans[0]: malformed varint (byte 4)"
    )
    assert validate(b"\x0a\x05ab") == "length runs past the end of its message (byte 0)"
    grouped = _ld(1, _ld(1, b"") + _group(7, _group(8, b"\x0f")))  # wire type 7
    assert validate(grouped) == "resource_spans[0].group 7.group 8: invalid wire type (byte 6)"


def test_check_proto_request_raises_input_error_naming_the_source_and_problem() -> None:
    proto.check_proto_request(SAMPLES[0], source="body")
    with pytest.raises(InputError) as caught:
        proto.check_proto_request(_in_resource_spans(_ld(3, b"\xff")), source="body")
    assert str(caught.value) == (
        "body: not an OTLP ExportTraceServiceRequest: resource_spans[0].schema_url: invalid"
        " UTF-8 (byte 2)"
    )


def test_without_the_extension_upb_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proto, "_validate_request", None)
    proto.check_proto_request(SAMPLES[0])
    with pytest.raises(InputError) as caught:
        proto.check_proto_request(_in_resource_spans(_ld(3, b"\xff")), source="body")
    assert str(caught.value).startswith("body: not an OTLP ExportTraceServiceRequest: Error")


def test_validate_takes_bytes_only() -> None:
    with pytest.raises(TypeError):
        validate(bytearray(SAMPLES[0]))
