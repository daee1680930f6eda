"""The held agent span annotated as bytes: the same span as parsing it and `annotate_span`."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from export.attribute_values import attribute_values
from export.scored_runs import scored_run
from export.test_wire import fill_all
from support.otlp_proto import request_from_otlp_json
from tracescore.export.attributes import score_attributes
from tracescore.export.spans import annotate_span, annotate_span_bytes
from tracescore.model.span import AttrValue

TESTS = Path(__file__).resolve().parents[1]
BENCH = TESTS.parent / "bench" / "throughput.py"

# What scoring puts on a span: doubles, strings (long explanations too) and a bool.
SCORES = score_attributes(scored_run())
RUN_ONLY = {"tracescore.verdict": "skipped", "tracescore.complete": False}
ODD = {
    "eval.tón.score": 0.25,
    "eval.tón.label": "пройдено ✓",
    "eval.tón.explanation": "x" * 300,  # a length needing a two-byte varint
    "nodot": 7,
    "eval.list": ("a", 1, 2.5, True, b"\x00"),
    "eval.map": {"k": "v", "n": {"deep": None}},
}


def slow_path(span_bytes: bytes, attributes: Mapping[str, AttrValue]) -> Span:
    """The reference: the message path the assembler took before."""
    span = Span.FromString(span_bytes)
    annotate_span(span, attributes)
    return span


def assert_same(span_bytes: bytes, attributes: Mapping[str, AttrValue]) -> bytes:
    fast = annotate_span_bytes(span_bytes, attributes)
    expected = slow_path(span_bytes, attributes)
    got = Span.FromString(fast)
    assert got == expected
    assert [(kv.key, kv.value) for kv in got.attributes] == [
        (kv.key, kv.value) for kv in expected.attributes
    ]
    assert got.SerializeToString() == expected.SerializeToString()
    return fast


def spans_of(request: ExportTraceServiceRequest) -> Iterator[bytes]:
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                yield span.SerializeToString()


def fixture_spans() -> list[bytes]:
    files = sorted((TESTS / "testdata").glob("**/*.otlp.json"))
    assert len(files) > 10
    return [b for f in files for b in spans_of(request_from_otlp_json(json.loads(f.read_text())))]


def bench_spans() -> list[bytes]:
    spec = importlib.util.spec_from_file_location("bench_throughput", BENCH)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    batches, _, _ = bench.make_stream(3)
    return [b for body in batches for b in spans_of(ExportTraceServiceRequest.FromString(body))]


def own_keys(span_bytes: bytes) -> dict[str, AttrValue]:
    """Score attributes that collide with every key the span has (a re-scored span)."""
    return {kv.key: f"new {kv.key}" for kv in Span.FromString(span_bytes).attributes}


@pytest.mark.parametrize("source", [fixture_spans, bench_spans])
def test_real_spans_annotate_as_the_message_path_does(source: Any) -> None:
    spans = source()
    appended = 0
    for span_bytes in spans:
        for attributes in (SCORES, RUN_ONLY, ODD, own_keys(span_bytes), {**SCORES, **ODD}):
            fast = assert_same(span_bytes, attributes)
            appended += fast.startswith(span_bytes)
        assert annotate_span_bytes(span_bytes, {}) is span_bytes
    assert appended >= 3 * len(spans), "most spans take the byte path"


def test_the_byte_path_appends_to_the_received_bytes() -> None:
    span = Span(name="invoke_agent bot", span_id=b"\x01" * 8)
    span.attributes.add(key="gen_ai.agent.name").value.string_value = "bot"
    span.status.code = span.status.STATUS_CODE_OK  # a field after attributes on the wire
    span_bytes = span.SerializeToString()
    fast = assert_same(span_bytes, SCORES)
    assert fast.startswith(span_bytes), "no parse and re-serialize"


@pytest.mark.parametrize(
    "stale", [("tracescore.verdict",), ("eval.tool_calls.score",), ("eval.tone.label", "nodot")]
)
def test_a_key_the_span_has_is_replaced_not_duplicated(stale: tuple[str, ...]) -> None:
    # Appending alone would repeat the key: the span must go through the message path.
    span = Span(name="invoke_agent bot")
    span.attributes.add(key="gen_ai.agent.name").value.string_value = "bot"
    for key in stale:
        span.attributes.add(key=key).value.string_value = "stale"
    attributes = {**SCORES, "nodot": "fresh"}
    fast = Span.FromString(assert_same(span.SerializeToString(), attributes))
    keys = [kv.key for kv in fast.attributes]
    assert keys[0] == "gen_ai.agent.name"
    assert len(keys) == 1 + len(attributes), "each stale key replaced"
    values = {kv.key: kv.value for kv in fast.attributes}
    for key in stale:
        assert values[key].WhichOneof("value") is not None
        assert values[key].string_value != "stale"


def test_a_key_inside_a_value_or_a_shared_segment_changes_nothing() -> None:
    span = Span(name="eval.tool_calls.score")  # the whole key, but not as a key
    span.attributes.add(key="gen_ai.retrieval.query").value.string_value = "tracescore.verdict"
    span.attributes.add(key="eval.other").value.string_value = "eval.budget."
    assert_same(span.SerializeToString(), SCORES)


def test_an_empty_key_and_an_empty_span() -> None:
    assert_same(b"", SCORES)
    assert_same(b"", {"": "empty key"})
    span = Span()
    span.attributes.add(key="").value.string_value = "old"
    assert_same(span.SerializeToString(), {"": "new", "a": 1})


def test_unknown_fields_are_kept() -> None:
    span_bytes = Span(name="s").SerializeToString() + b"\xa8\x06\x05"  # field 101, varint 5
    fast = assert_same(span_bytes, SCORES)
    assert fast.startswith(span_bytes)


# A few keys that collide, share segments with the score keys, or are not ASCII.
KEYS = st.sampled_from(
    ["eval.a.score", "eval.a.label", "eval.b.score", "tracescore.verdict", "eval.", "é.ключ", ""]
) | st.text(max_size=12)
VALUES = attribute_values() | KEYS


@given(
    st.lists(st.tuples(KEYS, VALUES), max_size=6),
    st.dictionaries(KEYS, VALUES, max_size=6),
    st.text(max_size=20),
)
def test_any_span_and_attributes_annotate_as_the_message_path_does(
    own: list[tuple[str, Any]], attributes: dict[str, Any], name: str
) -> None:
    span = Span(name=name, span_id=b"\x02" * 8)
    for key, value in own:  # duplicates too: received spans may break the rule
        fill_all(span, {key: value})
    span.status.message = name
    assert_same(span.SerializeToString(), attributes)
