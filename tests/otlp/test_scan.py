"""The span scanner: native and pure-Python twins agree, and both agree with upb.

The native scanner is optional at install time (setup.py builds it when a C compiler is there),
but CI has one, so a missing build is a failure here, not a silent skip.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.native import requires_native
from support.otlp_proto import request_bodies, request_of
from tracescore.model.span import SpanEvent, SpanRecord, StatusCode
from tracescore.otlp import scan
from tracescore.otlp.scan import SpanReader, decode_any_value, python_scan_spans
from tracescore.otlp.wire import len_field
from tracescore.trajectory import needed_attribute

TESTDATA = Path(__file__).parents[1] / "testdata"
FIXTURES = sorted(
    path
    for pattern in ("frameworks/*.otlp.json", "judges/*.otlp.json", "traces/*/input.otlp.json")
    for path in TESTDATA.glob(pattern)
)

# On the pure-Python path (TRACESCORE_NATIVE=0) the "native" side is the Python scanner again,
# so every comparison below still checks it against upb's reading.
native_scan_spans: Any = python_scan_spans
if scan.NATIVE:
    from tracescore.otlp._scan import scan_spans as native_scan_spans  # type: ignore[import-not-found]


def _scan_with(scanner: Any, body: bytes, keep: Any = None) -> list[Any]:
    reader = SpanReader(keep)
    return list(
        scanner(
            body,
            reader._keys,
            reader._classify,
            scan._decode_value_bytes,
            reader._slow_kv,
            scan.ATTRIBUTE_OVERHEAD,
        )
    )


def _both(body: bytes, keep: Any = None) -> tuple[list[Any], list[Any]]:
    """(native, python) scans of body with fresh readers."""
    return _scan_with(native_scan_spans, body, keep), _scan_with(python_scan_spans, body, keep)


def _python_records(body: bytes, keep: Any = None) -> list[Any]:
    """What the pure-Python path makes of body: scanned tuples turned into records."""
    return SpanReader(keep).python_records(body)


def _upb_view(body: bytes) -> list[tuple[Any, ...]]:
    """What upb makes of every span: the reference both scanners must match."""
    request = ExportTraceServiceRequest.FromString(body)
    return [
        (
            i, j, k, span.trace_id, span.span_id, span.parent_span_id, span.name, span.kind,
            span.start_time_unix_nano, span.end_time_unix_nano, span.status.code,
            span.status.message, {kv.key: decode_any_value(kv.value) for kv in span.attributes},
            tuple(e.SerializeToString() for e in span.events), rs.resource.SerializeToString(),
            ss.scope.name,
        )
        for i, rs in enumerate(request.resource_spans)
        for j, ss in enumerate(rs.scope_spans)
        for k, span in enumerate(ss.spans)
    ]  # fmt: skip


def _without_sizes(scanned: list[Any]) -> list[tuple[Any, ...]]:
    """Scanned spans as `_upb_view` shows them: no sizes, and the raw events and resource
    re-serialized through upb, which moves unknown fields to the end of a message."""
    return [
        (
            *s[:13],
            tuple(Span.Event.FromString(e).SerializeToString() for e in s[14]),
            Resource.FromString(s[15]).SerializeToString(),
            s[16],
        )
        for s in scanned
    ]


@requires_native
def test_the_native_scanner_is_built() -> None:
    # setup.py builds it as optional; this is what CI and the benchmarks run.
    assert scan.NATIVE, "tracescore.otlp._scan was not built: is a C compiler installed?"


def test_there_are_fixtures() -> None:
    assert len(FIXTURES) >= 25


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_both_scanners_read_every_fixture_as_upb_does(path: Path) -> None:
    for body in request_bodies(path):
        native, python = _both(body)
        assert native == python
        assert _without_sizes(native) == _upb_view(body)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_key_filter_keeps_only_its_keys(path: Path) -> None:
    for body in request_bodies(path):
        native, python = _both(body, needed_attribute)
        assert native == python
        for span, full in zip(native, _upb_view(body), strict=True):
            assert span[12] == {k: v for k, v in full[12].items() if needed_attribute(k)}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("keep", [None, needed_attribute], ids=["all-keys", "needed-keys"])
def test_native_records_equal_the_records_python_builds(path: Path, keep: Any) -> None:
    for body in request_bodies(path):
        native = SpanReader(keep).records(body)
        assert native == _python_records(body, keep)
        for (*_, record, _), span in zip(native, _upb_view(body), strict=True):
            assert record.trace_id == span[3].hex()
            assert len(record.events) == len(span[13])


def test_records_share_names_and_resources_and_map_unknown_status_codes_to_unset() -> None:
    spans = [
        Span(trace_id=b"\x01" * 16, span_id=bytes([n + 1]) * 8, name="chat", parent_span_id=p)
        for n, p in enumerate([b"", b"\x00" * 8, b"\x03" * 8, b"\x04" * 4])
    ]
    spans[0].status.code = 2
    spans[1].status.code = 5  # not a code OTLP defines
    spans[1].status.message = "odd"
    event = spans[2].events.add(name="exception", time_unix_nano=7)
    event.attributes.add(key="exception.type").value.string_value = "ValueError"
    body = request_of(*spans)
    reader = SpanReader()
    first, second = reader.records(body), reader.records(body)
    assert first == _python_records(body) == second
    records = [r[6] for r in first]
    assert [r.parent_span_id for r in records] == [None, None, "03" * 8, None]
    assert [r.status_code for r in records[:2]] == [StatusCode.ERROR, StatusCode.UNSET]
    assert records[1].status_message == "odd"
    assert records[2].events == (SpanEvent("exception", 7, {"exception.type": "ValueError"}),)
    assert records[0].name is records[1].name is second[0][6].name
    assert records[0].trace_id is records[1].trace_id  # one hex string per trace and request
    assert records[0].resource is second[0][6].resource


def test_a_status_code_past_32_bits_is_read_as_the_int32_upb_reads() -> None:
    # Status.code is an int32: 2**32 + 2 on the wire is read as 2 (ERROR) by upb.
    code = 2**32 + 2
    varint = bytearray()
    while code >= 0x80:
        varint.append(code & 0x7F | 0x80)
        code >>= 7
    varint.append(code)
    status = b"\x18" + bytes(varint)
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s").SerializeToString()
    raw = span + _field(15, status)
    body = _field(1, _field(2, _field(2, raw)))  # by hand: upb would re-encode the code
    native = SpanReader().records(body)
    assert native == _python_records(body)
    assert native[0][6].status_code is StatusCode.ERROR


def test_the_native_builder_refuses_a_record_class_it_cannot_fill() -> None:
    from tracescore.otlp import _scan as native  # type: ignore[attr-defined,unused-ignore]

    @dataclasses.dataclass(slots=True)
    class Wider:  # one field more than the extension fills: it would stay unset
        trace_id: str
        extra: str

    names = tuple(f.name for f in dataclasses.fields(SpanRecord))
    statuses = (StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR)
    with pytest.raises(TypeError):
        native.bind(Wider, (*names, "extra"), statuses, scan._event)

    class NotSlotted:
        pass

    with pytest.raises(TypeError):
        native.bind(NotSlotted, names, statuses, scan._event)
    native.bind(SpanRecord, names, statuses, scan._event)  # as scan.py left it


@requires_native
def test_the_native_builder_refuses_a_record_class_holding_more_than_its_fields() -> None:
    # Records are allocated without zeroing (every slot is written): a slot the extension does
    # not know would hold whatever the memory held before.
    from tracescore.otlp import _scan as native  # type: ignore[attr-defined,unused-ignore]

    class Extended(SpanRecord):  # type: ignore[misc]
        __slots__ = ("extra",)

    names = tuple(f.name for f in dataclasses.fields(SpanRecord))
    statuses = (StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR)
    with pytest.raises(TypeError, match="more than its"):
        native.bind(Extended, names, statuses, scan._event)
    (record,) = [r[6] for r in SpanReader().records(_field(1, _field(2, _field(2, b""))))]
    assert type(record) is SpanRecord  # the binding before it stands


def _kv(key: str, value: AnyValue | None = None) -> KeyValue:
    kv = KeyValue(key=key)
    if value is not None:
        kv.value.CopyFrom(value)
    return kv


def test_values_of_every_kind_and_unusual_encodings_decode_like_upb() -> None:
    nested = AnyValue()
    nested.array_value.values.add().string_value = "a"
    nested.array_value.values.add().int_value = -3
    kvlist = AnyValue()
    kvlist.kvlist_value.values.add(key="k").value.bool_value = True
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s")
    span.attributes.extend(
        [
            _kv("s", AnyValue(string_value="héllo" * 40)),  # two-byte lengths
            _kv("empty", AnyValue(string_value="")),
            _kv("unset", AnyValue()),
            _kv("none"),
            _kv("neg", AnyValue(int_value=-(2**63))),
            _kv("big", AnyValue(int_value=2**63 - 1)),
            _kv("d", AnyValue(double_value=-1.5e300)),
            _kv("b", AnyValue(bool_value=False)),
            _kv("raw", AnyValue(bytes_value=b"\x00\xff")),
            _kv("arr", nested),
            _kv("kv", kvlist),
            _kv("k" * 200, AnyValue(string_value="long key")),
        ]
    )
    body = request_of(span)
    # Hand-made oddities: value before key, a repeated value (the last one wins, as in upb),
    # and an unknown field inside a KeyValue.
    odd = [
        b"\x12\x03\x0a\x01x\x0a\x03odd",
        b"\x0a\x03two\x12\x03\x0a\x01a\x12\x03\x0a\x01b",
        b"\x0a\x03unk\x12\x03\x0a\x01u\x18\x07",
    ]
    extra = b"".join(b"\x4a" + bytes([len(kv)]) + kv for kv in odd)
    span_bytes = span.SerializeToString() + extra
    body = request_of(Span.FromString(span_bytes))
    native, python = _both(body)
    assert native == python
    assert _without_sizes(native) == _upb_view(body)
    attributes = native[0][12]
    assert attributes["odd"] == "x"
    assert attributes["two"] == "b"
    assert attributes["neg"] == -(2**63)
    assert attributes["unset"] is None
    assert attributes["none"] is None
    assert attributes["k" * 200] == "long key"


def _field(number: int, payload: bytes) -> bytes:
    assert len(payload) < 0x80
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_resource_and_scope_may_follow_their_spans_on_the_wire() -> None:
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.add(key="service.name").value.string_value = "svc"
    ss = rs.scope_spans.add()
    ss.scope.name = "scope"
    ss.spans.add(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s")
    # Re-order: spans first, then the scope; scope_spans first, then the resource.
    ss_bytes = ss.spans[0].SerializeToString()
    scope_field = (
        b"\x0a" + bytes([len(ss.scope.SerializeToString())]) + ss.scope.SerializeToString()
    )
    ss_body = b"\x12" + bytes([len(ss_bytes)]) + ss_bytes + scope_field
    resource = rs.resource.SerializeToString()
    rs_body = (
        b"\x12" + bytes([len(ss_body)]) + ss_body + b"\x0a" + bytes([len(resource)]) + resource
    )
    body = b"\x0a" + bytes([len(rs_body)]) + rs_body
    native, python = _both(body)
    assert native == python
    assert native[0][15] == resource
    assert native[0][16] == "scope"


def test_malformed_input_raises_value_error_in_both() -> None:
    good = request_of(Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s"))
    for bad in (good[:-3], b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", b"\x0a\x05ab"):
        for scanner in (native_scan_spans, python_scan_spans):
            with pytest.raises(Exception):  # noqa: B017, PT011 - ValueError or upb's DecodeError
                _scan_with(scanner, bad)


_SAMPLE = request_bodies(TESTDATA / "frameworks" / "pydantic_ai-subagent.otlp.json")[0]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_requests_never_crash_and_agree_with_upb(data: st.DataObject) -> None:
    # Flip, cut or splice bytes of a real request: whatever upb accepts, both scanners read
    # the same way; whatever it refuses, they refuse or read without crashing the process.
    body = bytearray(_SAMPLE)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(body) - 1))
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip":
            body[at] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del body[at : at + data.draw(st.integers(1, 16))]
        else:
            body[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    raw = bytes(body)
    try:
        expected = _upb_view(raw)
    except Exception:
        expected = None
    records = []
    for make in (lambda: SpanReader().records(raw), lambda: _python_records(raw)):
        try:
            records.append(make())
        except Exception:
            records.append(None)
    results = []
    for scanner in (native_scan_spans, python_scan_spans):
        try:
            results.append(_without_sizes(_scan_with(scanner, raw)))
        except Exception:
            results.append(None)
    if expected is not None:
        assert results == [expected, expected]
        assert records[0] == records[1]
        assert records[0] is not None


def test_a_resource_with_an_unknown_field_is_read_as_upb_reads_it() -> None:
    # Found by the fuzz test: byte 42 of the sample turns a resource attribute into unknown
    # field 5, which the scanners hand on as received and upb re-serializes at the end.
    body = bytearray(_SAMPLE)
    body[42] = 0x2A
    native, python = _both(bytes(body))
    assert native == python
    assert _without_sizes(native) == _upb_view(bytes(body))
    assert b"*%\n\x12telemetry.sdk.name" in native[0][15]


@pytest.mark.parametrize("native", [True, False])
def test_kept_keys_are_the_very_names_the_builder_looks_up(native: bool) -> None:
    # The reader interns the keys it decodes and the builder's names are interned first, so a
    # record's keys are semconv's own str objects: lookups end at the pointer compare.
    from tracescore import semconv
    from tracescore.trajectory._attribute_filter import NEEDED_KEYS

    looked_up = {k: k for k in NEEDED_KEYS}
    assert looked_up[semconv.GEN_AI_OPERATION_NAME] is semconv.GEN_AI_OPERATION_NAME
    assert looked_up[semconv.GEN_AI_TOOL_CALL_RESULT] is semconv.GEN_AI_TOOL_CALL_RESULT
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="execute_tool lookup")
    for key in (semconv.GEN_AI_OPERATION_NAME, semconv.GEN_AI_TOOL_NAME, "custom.key"):
        span.attributes.append(KeyValue(key=key, value=AnyValue(string_value="x")))
    reader = SpanReader(needed_attribute)
    body = request_of(span)
    records = reader.records(body) if native else reader.python_records(body)
    (record,) = [r[6] for r in records]
    keys = list(record.attributes)
    assert keys == [semconv.GEN_AI_OPERATION_NAME, semconv.GEN_AI_TOOL_NAME]
    assert all(key is looked_up[key] for key in keys)


def _texts_filter(key: str) -> bool | tuple[str, ...]:
    """Every key, but `r*` keys only for string values holding "rror" or a backslash."""
    return ("rror", "\\") if key.startswith("r") else True


def test_a_key_kept_for_some_texts_leaves_out_its_other_ascii_string_values() -> None:
    kvlist = AnyValue()
    kvlist.kvlist_value.values.add(key="k").value.string_value = "plain"
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s")
    span.attributes.extend(
        [
            _kv("r_plain", AnyValue(string_value='{"content": "fine"}')),  # left out
            _kv("r_error", AnyValue(string_value='{"isError": true}')),
            _kv("r_escape", AnyValue(string_value='"a \\" b"')),
            _kv("r_empty", AnyValue(string_value="")),  # left out
            _kv("r_accent", AnyValue(string_value="café")),  # not ASCII: decoded
            _kv("r_int", AnyValue(int_value=3)),
            _kv("r_list", kvlist),
            _kv("r_none"),
            _kv("other", AnyValue(string_value="kept whole")),
        ]
    )
    # Unusual encodings of a left-out value are decoded (the scanners judge the usual one).
    odd = [b"\x12\x03\x0a\x01x\x0a\x05r_odd", b"\x0a\x05r_two\x12\x03\x0a\x01a\x12\x03\x0a\x01b"]
    extra = b"".join(b"\x4a" + bytes([len(kv)]) + kv for kv in odd)
    # Framed by hand: through upb, the odd KeyValues would come out in the usual encoding.
    spans = len_field(b"\x12", span.SerializeToString() + extra)  # ScopeSpans.spans
    body = len_field(b"\x0a", len_field(b"\x12", spans))  # resource_spans, scope_spans
    native, python = _both(body, _texts_filter)
    assert native == python
    assert sorted(native[0][12]) == [
        "other", "r_accent", "r_error", "r_escape", "r_int", "r_list", "r_none", "r_odd", "r_two",
    ]  # fmt: skip
    reader = SpanReader(_texts_filter)
    (record,) = [item[6] for item in reader.records(body)]
    assert record.attributes == native[0][12]
    assert reader.python_records(body)[0][6] == record
    # Past the key table's fill the answers come from the key dict: the same values.
    assert [item[6] for item in reader.records(body)] == [record]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["r1", "r2", "x"]),
            # Texts that straddle the scanner's 8-byte words, made of the needles' letters.
            st.text(max_size=12) | st.text(alphabet="rore\\xé", max_size=40),
        ),
        max_size=8,
    )
)
def test_both_scanners_leave_out_the_same_values(pairs: list[tuple[str, str]]) -> None:
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s")
    span.attributes.extend(_kv(key, AnyValue(string_value=text)) for key, text in pairs)
    body = request_of(span)
    native, python = _both(body, _texts_filter)
    assert native == python
    expected: dict[str, str] = {}
    for key, text in pairs:  # the last value of a key wins; a left-out one removes nothing
        if _texts_filter(key) is True or not text.isascii() or "rror" in text or "\\" in text:
            expected[key] = text
    assert native[0][12] == expected
