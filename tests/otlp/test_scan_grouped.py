"""Spans grouped by trace while scanning: the native grouping, its Python twin and the records.

The assembler decides per trace from these groups what it decided per span before, so a group
that lost a record, miscounted its lead or misplaced a position would change what it keeps.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.agent_spans import kv
from support.native import requires_native
from support.otlp_proto import request_bodies, request_of
from tracescore.otlp import scan
from tracescore.otlp.grouping import Grouped, group_records
from tracescore.otlp.scan import CandidateRule, SpanReader
from tracescore.pipeline.scoring import AGENT_CANDIDATES
from tracescore.trajectory import needed_attribute

TESTDATA = Path(__file__).parents[1] / "testdata"
FIXTURES = sorted(
    path
    for pattern in (
        "frameworks/*.otlp.json",
        "judges/*.otlp.json",
        "traces/*/input.otlp.json",
        "regressions/*.otlp.json",
    )
    for path in TESTDATA.glob(pattern)
)
RULE = CandidateRule("op", "agent", "invoke", ("marker.a", "marker.b"))
A, B, C = b"\x0a" * 16, b"\x0b" * 16, b"\x0c" * 16


def _agree(body: bytes, keep: Any = None, rule: CandidateRule | None = None) -> Grouped:
    """The native grouping of body, checked against the twin and against the records."""
    native = SpanReader(keep, rule).grouped(body)
    twin = SpanReader(keep, rule).python_grouped(body)
    assert native == twin
    assert list(native[0]) == list(twin[0]), "groups come in order of first appearance"
    assert native == group_records(SpanReader(keep, rule).records(body))
    return native


@requires_native
def test_the_native_grouping_is_used() -> None:
    assert scan.NATIVE
    assert scan._scan_grouped is not None


@requires_native
def test_native_records_are_out_of_the_cyclic_gcs_view() -> None:
    # Held records are most of what `serve` keeps alive; tracked, every collection walked them.
    body = request_of(_span(A, 1, k="v"), _span(A, 2, parent=False, count=2))
    groups, _ = SpanReader().grouped(body)
    records = [*groups[A][0], *(r[-2] for r in SpanReader().records(body))]
    assert len(records) == 4
    assert not any(gc.is_tracked(record) for record in records)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("keep", [None, needed_attribute], ids=["all-keys", "needed-keys"])
def test_native_groups_equal_the_twin_on_every_fixture(path: Path, keep: Any) -> None:
    for body in request_bodies(path):
        for rule in (None, AGENT_CANDIDATES):
            groups, rejects = _agree(body, keep, rule)
            records = SpanReader(keep, rule).records(body)
            assert sum(len(g[0]) for g in groups.values()) + len(rejects) == len(records)


def _span(
    trace: bytes, n: int, *, parent: bool = True, name: str = "", **attributes: object
) -> Span:
    span = Span(trace_id=trace, span_id=bytes([n]) * 8, name=name or f"s{n}")
    if parent:
        span.parent_span_id = b"\x99" * 8
    span.attributes.extend(kv(k, v) for k, v in attributes.items())
    return span


def test_a_group_summarizes_what_the_assembler_decides_per_span() -> None:
    spans = [
        _span(A, 1, parent=False, name="invoke s1"),  # 0: in A's lead, a root, a candidate
        Span(trace_id=bytes(16), span_id=b"\x01" * 8, name="zero trace"),  # 1: rejected
        _span(B, 2, x=1),  # 2: B's first span, with attributes
        _span(A, 3),  # 3: still A's lead
        _span(A, 4, op="agent"),  # 4: A's first span with attributes, a candidate
        Span(trace_id=A, span_id=b"\x05" * 4, name="short span id"),  # 5: rejected
        _span(A, 6, parent=False),  # 6: a second root of A
        _span(C, 7),  # 7: C has no span with attributes
    ]
    groups, rejects = _agree(request_of(*spans), None, RULE)
    assert list(groups) == [A, B, C]
    records, size, lead, last_root, candidates, lead_candidates, first, first_attr = groups[A]
    assert [r.name for r in records] == ["invoke s1", "s3", "s4", "s6"]
    assert (lead, last_root, lead_candidates, first, first_attr) == (2, 3, 1, 0, 4)
    assert [(c[:3], c[3].name) for c in candidates] == [((0, 0, 0), "invoke s1"), ((0, 0, 4), "s4")]
    assert size == scan.ATTRIBUTE_OVERHEAD + len("agent")
    assert groups[B][1:4] + groups[B][5:] == (scan.ATTRIBUTE_OVERHEAD, 0, -1, 0, 2, 2)
    assert groups[C][2:4] + groups[C][6:] == (1, -1, 7, -1)
    assert [(r[:3], r[5]) for r in rejects] == [
        ((0, 0, 1), "zero trace"),
        ((0, 0, 5), "short span id"),
    ]
    assert rejects[1][3:5] == (A, b"\x05" * 4)


_TRACES = [A, B, C, bytes(16), b"\x0d" * 8, b""]
_SPAN_IDS = [b"\x01" * 8, b"\x02" * 8, bytes(8), b"\x03" * 4, b""]
_ATTRIBUTES = [
    {},
    {},
    {"op": "agent"},
    {"op": "chat", "gen_ai.operation.name": "chat"},
    {"marker.b": True},
    {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shop"},
    {"http.request.method": "POST"},
]
_span_strategy = st.builds(
    lambda trace, sid, parent, name, attributes: _odd_span(trace, sid, parent, name, attributes),
    st.sampled_from(_TRACES),
    st.sampled_from(_SPAN_IDS),
    st.sampled_from([b"", bytes(8), b"\x07" * 8, b"\x07" * 3]),
    st.sampled_from(["invoke_agent shop", "invoke x", "chat", "POST", ""]),
    st.sampled_from(_ATTRIBUTES),
)


def _odd_span(
    trace: bytes, sid: bytes, parent: bytes, name: str, attributes: dict[str, Any]
) -> Span:
    span = Span(trace_id=trace, span_id=sid, parent_span_id=parent, name=name)
    span.attributes.extend(kv(k, v) for k, v in attributes.items())
    return span


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.lists(_span_strategy, max_size=6), max_size=3), max_size=3),
    st.sampled_from([None, needed_attribute, lambda key: key == "op"]),
    st.sampled_from([None, RULE, AGENT_CANDIDATES]),
)
def test_generated_requests_group_alike(
    layout: list[list[list[Span]]], keep: Any, rule: CandidateRule | None
) -> None:
    # Interleaved traces, invalid ids, spans without attributes first, several roots and
    # candidates, and resources or scopes without spans.
    request = ExportTraceServiceRequest()
    for scopes in layout:
        rs = request.resource_spans.add()
        rs.resource.attributes.append(kv("service.name", "svc"))
        for spans in scopes:
            rs.scope_spans.add().spans.extend(spans)
    body = request.SerializeToString()
    groups, rejects = _agree(body, keep, rule)
    flat = [s for scopes in layout for spans in scopes for s in spans]
    assert sum(len(g[0]) for g in groups.values()) + len(rejects) == len(flat)


def test_names_and_parents_cached_per_request_stay_exact() -> None:
    # The scanner keeps a request's span names (by a hash of their length and first and last
    # 8 bytes) and the last parent id it saw: names alike in all of those, more distinct
    # names than its table keeps, repeats, and parents alternating must all come out exact.
    names = [f"execute_tool t{n:03d} in this run" for n in range(200)] + ["é ✓", "", "a"]
    spans = []
    for n, name in enumerate(names + names[::7]):
        span = Span(trace_id=A if n % 3 else B, span_id=(n + 1).to_bytes(8, "big"), name=name)
        span.parent_span_id = (n % 2 + 1).to_bytes(8, "big") if n % 5 else b""
        spans.append(span)
    groups, _ = _agree(request_of(*spans))
    records = sorted((r for g in groups.values() for r in g[0]), key=lambda r: int(r.span_id, 16))
    assert [r.name for r in records] == [s.name for s in spans]
    assert [r.parent_span_id for r in records] == [
        s.parent_span_id.hex() if s.parent_span_id else None for s in spans
    ]


def test_many_interleaved_traces_alike_in_half_their_id_group_exactly() -> None:
    # The scanner finds a span's group by a table over the raw trace id bytes that grows as
    # traces come: ids equal in their first or last 8 bytes, spans of a trace far apart on the
    # wire, and more traces than the table first holds must all land in their own group.
    head, tail = b"\x11" * 8, b"\x22" * 8
    traces = [head + n.to_bytes(8, "big") for n in range(1, 80)]
    traces += [n.to_bytes(8, "big") + tail for n in range(1, 80)]
    spans = [
        _span(trace, n % 250 + 1, name=f"s{round_}", x=round_)
        for round_ in range(3)
        for n, trace in enumerate(traces)
    ]
    groups, rejects = _agree(request_of(*spans))
    assert list(groups) == traces
    assert not rejects
    for n, trace in enumerate(traces):
        records = groups[trace][0]
        assert [r.name for r in records] == ["s0", "s1", "s2"]
        assert {r.trace_id for r in records} == {trace.hex()}
        assert groups[trace][6] == n  # first: its wire position


@requires_native  # the native scanner's table of shared values
def test_string_values_shared_per_request_stay_exact() -> None:
    # The scanner shares one str per distinct short string value in a request (found by a
    # hash of its length and first and last 8 bytes) until its table is full, and stops
    # looking up the values of a key that do not repeat: values alike in all of those, more
    # distinct values than the table keeps, long values, non-ASCII text and empty strings
    # must all come out exact, and values that repeat must be one str.
    alike = [f"{'a' * 8}{n:04d}{'b' * 8}" for n in range(40)]
    values = [*alike, *(f"v{n}" for n in range(600)), "é ✓", "", "x" * 128, "x" * 129]
    spans = []
    for n, value in enumerate(value for value in values for _ in range(3)):
        attributes = {"same": "chat", "repeated": value, "unique": f"id-{n}"}
        spans.append(_span(A if n % 2 else B, n % 250 + 1, **attributes))
    groups, _ = _agree(request_of(*spans))
    records = sorted(
        (r for g in groups.values() for r in g[0]), key=lambda r: int(r.attributes["unique"][3:])
    )
    assert [r.attributes["repeated"] for r in records[::3]] == values
    assert len({id(r.attributes["same"]) for r in records}) == 1
    for n in range(0, 3 * len(alike), 3):  # the alike values, each kept in the table
        assert records[n].attributes["repeated"] is records[n + 2].attributes["repeated"]
