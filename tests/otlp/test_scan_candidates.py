"""Agent candidates flagged while scanning: the native flag, its Python twin and agent_name agree.

The assembler asks `agent_name` (which classifies the span) only of spans the scanner flags, so
a flag missing on a real agent span would leave its run unanchored and its span unheld.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.otlp_proto import request_bodies, request_of
from tracescore import semconv
from tracescore.otlp import scan
from tracescore.otlp.scan import CandidateRule, SpanReader
from tracescore.pipeline.scoring import AGENT_CANDIDATES, agent_name

TESTDATA = Path(__file__).parents[1] / "testdata"
FIXTURES = sorted(
    path
    for root, pattern in (
        (TESTDATA, "frameworks/*.otlp.json"),
        (TESTDATA, "traces/*/input.otlp.json"),
        (TESTDATA, "regressions/*.otlp.json"),
    )
    for path in root.glob(pattern)
)
RULE = CandidateRule("op", "agent", "invoke", ("marker.a", "marker.b"))


def _python_records(body: bytes, rule: CandidateRule | None) -> list[Any]:
    return SpanReader(None, rule).python_records(body)


def _span(name: str, **attributes: Any) -> Span:
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name=name)
    for key, value in attributes.items():
        kv = span.attributes.add(key=key)
        if isinstance(value, bool):
            kv.value.bool_value = value
        elif isinstance(value, int):
            kv.value.int_value = value
        else:
            kv.value.string_value = value
    return span


def test_fixtures_were_found() -> None:
    assert len(FIXTURES) > 10


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_agent_span_is_a_candidate_and_native_agrees_with_python(path: Path) -> None:
    for body in request_bodies(path):
        native = SpanReader(None, AGENT_CANDIDATES).records(body)
        assert native == _python_records(body, AGENT_CANDIDATES)
        for *_, record, candidate in native:
            assert candidate is AGENT_CANDIDATES.matches(record)
            if agent_name(record) is not None:
                assert candidate, record.name


def test_the_rule_flags_by_value_by_name_prefix_and_by_key() -> None:
    spans = [
        _span("x", op="agent"),  # by value
        _span("invoke something"),  # by name prefix
        _span("x", **{"marker.b": 1}),  # by key, whatever its value
        _span("x", op="agentx"),  # another value
        _span("x", op=1),  # another type
        _span("x invoke", other="agent"),  # the prefix elsewhere, the value on another key
        _span("x"),
    ]
    body = request_of(*spans)
    flags = [item[7] for item in SpanReader(None, RULE).records(body)]
    assert flags == [True, True, True, False, False, False, False]
    assert [item[7] for item in _python_records(body, RULE)] == flags


def test_without_a_rule_every_span_is_a_candidate() -> None:
    body = request_of(_span("x"), _span("y", op="z"))
    assert [item[7] for item in SpanReader().records(body)] == [True, True]
    assert [item[7] for item in _python_records(body, None)] == [True, True]


@pytest.mark.skipif(not scan.NATIVE, reason="the C extension was not built")
@pytest.mark.parametrize(
    "rule", [("op",), ("op", "v", 3, ()), (1, "v", "p", ()), ("op", "v", "p", ("k", 2)), []]
)
def test_the_native_scanner_refuses_a_malformed_rule(rule: Any) -> None:
    reader = SpanReader()
    reader._candidates = rule
    with pytest.raises(TypeError, match="rule must be"):
        reader.records(request_of(_span("x")))


_KEYS = st.sampled_from(["op", "marker.a", "marker.b", "other", semconv.GEN_AI_OPERATION_NAME])
_VALUES = st.one_of(
    st.sampled_from(["agent", "agen", "agent ", ""]),
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(
    names=st.lists(st.sampled_from(["invoke", "invoke x", "invok", "", "x invoke"]), min_size=1),
    attributes=st.lists(st.dictionaries(_KEYS, _VALUES, max_size=3), min_size=1),
)
def test_native_and_python_flags_agree_on_generated_spans(
    names: list[str], attributes: list[dict[str, Any]]
) -> None:
    spans = [_span(n, **a) for n, a in zip(names, attributes, strict=False)]
    body = request_of(*spans)
    native = SpanReader(None, RULE).records(body)
    assert native == _python_records(body, RULE)


def _length_delimited(number: int, payload: bytes) -> bytes:
    size, length = len(payload), b""
    while size >= 0x80:
        length += bytes([size & 0x7F | 0x80])
        size >>= 7
    return bytes([number << 3 | 2]) + length + bytes([size]) + payload


def _raw_request(*spans: bytes) -> bytes:
    """A request of span bytes as they are (upb would re-encode odd KeyValues canonically)."""
    scope_spans = b"".join(_length_delimited(2, span) for span in spans)
    return _length_delimited(1, _length_delimited(2, scope_spans))


def _with_raw_attributes(span: Span, *key_values: bytes) -> bytes:
    return span.SerializeToString() + b"".join(_length_delimited(9, kv) for kv in key_values)


def _flags(body: bytes) -> list[bool]:
    native = [item[7] for item in SpanReader(None, RULE).records(body)]
    grouped = [c[3] for g in SpanReader(None, RULE).grouped(body)[0].values() for c in g[4]]
    assert [item[7] for item in _python_records(body, RULE)] == native
    assert len(grouped) == sum(native)
    return native


def test_the_flag_reads_the_value_a_repeated_attribute_ends_with() -> None:
    # The native scan notes the rule's attribute as it keeps it, so the last value must win
    # as in the attributes dict, also when the last one comes in an odd encoding (upb's path).
    op_odd = b"\x0a\x02op\x12\x07\x0a\x01x\x0a\x02zz"  # a repeated string: "zz" wins
    op_odd_agent = b"\x0a\x02op\x12\x0a\x0a\x01x\x0a\x05agent"
    marker_odd = b"\x12\x03\x0a\x01v\x0a\x08marker.a"  # value before key
    bodies = [
        request_of(_span("x", op="agent"), _span("x", op="agentx")),
        _raw_request(
            _with_raw_attributes(_span("x", op="agent"), b"\x0a\x02op\x12\x03\x0a\x01x"),
            _with_raw_attributes(_span("x", op="x"), b"\x0a\x02op\x12\x07\x0a\x05agent"),
            _with_raw_attributes(_span("x", op="agent"), op_odd),
            _with_raw_attributes(_span("x", op="x"), op_odd_agent),
            _with_raw_attributes(_span("x"), marker_odd),
        ),
    ]
    assert _flags(bodies[0]) == [True, False]
    assert _flags(bodies[1]) == [False, True, False, True, True]


def test_the_flag_holds_past_the_scanners_key_and_name_tables() -> None:
    # Keys past the scanner's table of 256 and names past its table of 128 are looked up
    # another way: a rule key or a name prefix found there must still flag the span.
    crowded = _span("x", **{f"k{n}": n for n in range(300)}, **{"marker.a": 1})
    names = [_span(f"n{n}") for n in range(130)] + [_span("invoke late"), _span("n1")]
    assert _flags(request_of(crowded, _span("x", **{"marker.b": 2}))) == [True, True]
    assert _flags(request_of(*names)) == [False] * 130 + [True, False]
