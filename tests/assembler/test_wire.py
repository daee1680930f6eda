"""Byte-level cutting of spans out of a serialized request agrees with the protobuf library."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from support.agent_spans import kv
from support.native import requires_native
from tracescore.assembler import _wire
from tracescore.assembler._wire import WireError, cut_spans, frame_request, python_cut_spans
from tracescore.otlp.wire import varint

# The native cutter (otlp/_scan.c) and its pure-Python twin must both pass every test here.
CUTTERS = pytest.mark.parametrize("cut", [cut_spans, python_cut_spans], ids=["native", "python"])


@requires_native
def test_the_native_cutter_is_built() -> None:
    assert _wire._native_cut is not None, "tracescore.otlp._scan was not built"


def _span(n: int, payload: int) -> Span:
    span = Span(trace_id=n.to_bytes(16, "big"), span_id=(n + 1).to_bytes(8, "big"), name=f"s{n}")
    # Large values give multi-byte length prefixes (>= 128 and >= 16 KiB bodies).
    span.attributes.append(kv("blob", "x" * payload))
    return span


@st.composite
def _requests(draw: st.DrawFn) -> tuple[ExportTraceServiceRequest, dict[int, dict[int, set[int]]]]:
    req = ExportTraceServiceRequest()
    remove: dict[int, dict[int, set[int]]] = {}
    counter = 0
    for i in range(draw(st.integers(0, 3))):
        rs = req.resource_spans.add()
        if draw(st.booleans()):
            rs.resource.attributes.append(kv("service.name", f"svc{i}"))
        if draw(st.booleans()):
            rs.schema_url = "https://opentelemetry.io/schemas/1.26.0"
        for j in range(draw(st.integers(0, 3))):
            ss = rs.scope_spans.add()
            if draw(st.booleans()):
                ss.scope.name = f"scope{j}"
            for k in range(draw(st.integers(0, 6))):
                counter += 1
                ss.spans.append(_span(counter, draw(st.sampled_from([0, 10, 200, 20_000]))))
                if draw(st.booleans()):
                    remove.setdefault(i, {}).setdefault(j, set()).add(k)
            if draw(st.booleans()):
                ss.schema_url = "https://example.com/scope-schema"  # after the spans on the wire
    return req, remove


def _expected(req: ExportTraceServiceRequest, remove: dict[int, dict[int, set[int]]]) -> bytes:
    out = ExportTraceServiceRequest()
    out.CopyFrom(req)
    for i in sorted(remove, reverse=True):
        rs = out.resource_spans[i]
        for j in sorted(remove[i], reverse=True):
            ss = rs.scope_spans[j]
            for k in sorted(remove[i][j], reverse=True):
                del ss.spans[k]
            if not ss.spans:
                del rs.scope_spans[j]
        if not rs.scope_spans:
            del out.resource_spans[i]
    return out.SerializeToString()


@CUTTERS
@settings(max_examples=200, deadline=None)
@given(_requests())
def test_cut_equals_deleting_from_the_parsed_message(
    cut: Any, case: tuple[ExportTraceServiceRequest, dict[int, dict[int, set[int]]]]
) -> None:
    req, remove = case
    body, held = cut(req.SerializeToString(), remove)
    assert ExportTraceServiceRequest.FromString(body).SerializeToString() == _expected(req, remove)
    wanted = {(i, j, k) for i, by in remove.items() for j, ks in by.items() for k in ks}
    assert set(held) == wanted
    for (i, j, k), (rs_header, ss_header, span) in held.items():
        rs, ss = req.resource_spans[i], req.resource_spans[i].scope_spans[j]
        assert Span.FromString(span) == ss.spans[k]
        got_rs, got_ss = ResourceSpans.FromString(rs_header), ScopeSpans.FromString(ss_header)
        assert (got_rs.resource, got_rs.schema_url) == (rs.resource, rs.schema_url)
        assert (got_ss.scope, got_ss.schema_url) == (ss.scope, ss.schema_url)
        assert not got_rs.scope_spans
        assert not got_ss.spans
    framed = ExportTraceServiceRequest.FromString(frame_request(held.values()))
    assert sorted(
        s.SerializeToString()
        for rs in framed.resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ) == sorted(held[key][2] for key in held)


@settings(max_examples=200, deadline=None)
@given(_requests())
def test_native_and_python_cutters_give_the_same_bytes(
    case: tuple[ExportTraceServiceRequest, dict[int, dict[int, set[int]]]],
) -> None:
    req, remove = case
    body = req.SerializeToString()
    assert cut_spans(body, remove) == python_cut_spans(body, remove)
    frozen = {i: {j: frozenset(ks) for j, ks in by.items()} for i, by in remove.items()}
    assert cut_spans(body, frozen) == python_cut_spans(body, remove)


@CUTTERS
def test_unknown_fields_are_kept_in_the_forwarded_bytes(cut: Any) -> None:
    req = ExportTraceServiceRequest()
    ss = req.resource_spans.add().scope_spans.add()
    ss.spans.extend([_span(1, 0), _span(2, 0)])
    unknown = b"\xa8\x06\x01"  # field 101, varint 1: from a newer OTLP version
    body = req.SerializeToString() + unknown
    out, _ = cut(body, {0: {0: {1}}})
    assert out.endswith(unknown)


@CUTTERS
def test_malformed_bytes_raise_wire_error(cut: Any) -> None:
    with pytest.raises(WireError):
        cut(b"\x0a\xff\xff\xff", {0: {0: {0}}})
    with pytest.raises(WireError):  # a span running past the end of its scope
        cut(b"\x0a\x06\x12\x04\x12\x05ab", {0: {0: {0}}})


def _framed_level_by_level(spans: list[tuple[bytes, bytes, bytes]]) -> bytes:
    """frame_request as it was written before: each scope, resource and the request joined in
    turn (the reference its one-join version must equal, byte for byte)."""
    grouped: dict[bytes, dict[bytes, list[bytes]]] = {}
    for rs_header, ss_header, span in spans:
        grouped.setdefault(rs_header, {}).setdefault(ss_header, []).append(span)
    out: list[bytes] = []
    for rs_header, scopes in grouped.items():
        rs_parts = [rs_header]
        for ss_header, span_list in scopes.items():
            ss_parts = [ss_header]
            for span in span_list:
                ss_parts.extend((b"\x12", varint(len(span)), span))
            ss_body = b"".join(ss_parts)
            rs_parts.extend((b"\x12", varint(len(ss_body)), ss_body))
        rs_body = b"".join(rs_parts)
        out.extend((b"\x0a", varint(len(rs_body)), rs_body))
    return b"".join(out)


_HEADERS = st.sampled_from([b"", b"\x0a\x02\x08\x01", b"\x1a\x03abc", b"\x0a\x00" * 70])
_SPAN_BYTES = st.one_of(st.binary(max_size=140), st.integers(0, 20_000).map(lambda n: b"\x2a" * n))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_HEADERS, _HEADERS, _SPAN_BYTES), max_size=12))
def test_framed_spans_are_the_bytes_framing_level_by_level_gave(
    spans: list[tuple[bytes, bytes, bytes]],
) -> None:
    assert frame_request(spans) == _framed_level_by_level(spans)
