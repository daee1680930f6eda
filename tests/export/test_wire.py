"""Hand-written OTLP bytes are exactly what protobuf itself writes for the same messages."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from export.attribute_values import attribute_values
from export.scored_runs import scored_run
from tracescore.export import wire
from tracescore.export.events import encode_evaluation_logs
from tracescore.model import Score, Trajectory

_SPAN_ATTRIBUTES = b"\x4a"


def fill(target: AnyValue, value: Any) -> None:
    """The reference: an AnyValue set field by field through the protobuf API."""
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, bytes):
        target.bytes_value = value
    elif isinstance(value, tuple):
        target.array_value.SetInParent()
        for item in value:
            fill(target.array_value.values.add(), item)
    elif isinstance(value, dict):
        target.kvlist_value.SetInParent()
        fill_all(target.kvlist_value, value)
    else:
        target.SetInParent()


def fill_all(target: Span | KeyValueList, attributes: dict[str, Any]) -> None:
    for key, value in attributes.items():
        kv = target.attributes.add() if isinstance(target, Span) else target.values.add()
        kv.key = key
        fill(kv.value, value)


values = attribute_values(exact_only=False)


@given(values)
def test_any_value_bytes_are_protobufs(value: Any) -> None:
    reference = AnyValue()
    fill(reference, value)
    assert wire.any_value(value) == reference.SerializeToString()


@given(st.dictionaries(st.text(max_size=120), values, max_size=6))
def test_attribute_fields_are_protobufs(attributes: dict[str, Any]) -> None:
    reference = Span()
    fill_all(reference, attributes)
    encoded = wire.attribute_fields(_SPAN_ATTRIBUTES, attributes)
    assert encoded == reference.SerializeToString()
    assert wire.attribute_fields(_SPAN_ATTRIBUTES, attributes) == encoded, "memoized: same bytes"


def test_memoized_values_keep_their_type() -> None:
    # 1.0 == 1 == True in Python: a memo keyed by value alone would mix them up.
    encoded = [wire.attribute_fields(_SPAN_ATTRIBUTES, {"k": v}) for v in (1.0, True, 1, "1")]
    kinds = [Span.FromString(e).attributes[0].value.WhichOneof("value") for e in encoded]
    assert kinds == ["double_value", "bool_value", "int_value", "string_value"]


def test_long_strings_and_lengths_over_one_byte() -> None:
    for size in (0, 1, 100, 101, 125, 126, 127, 128, 16383, 16384, 70000):
        attributes = {"key": "x" * size, "wide": "é" * size, "k" * size: size * 0.5}
        reference = Span()
        fill_all(reference, attributes)
        assert wire.attribute_fields(_SPAN_ATTRIBUTES, attributes) == reference.SerializeToString()


def test_evaluation_logs_are_protobufs_byte_for_byte() -> None:
    odd = Score("u", "t", 0.25, None, "x" * 300, "d", label="custom")
    runs = [
        scored_run(),
        scored_run(scores=(*scored_run().scores, odd)),
        scored_run(trajectory=Trajectory(trace_id="ab" * 16, span_id=None, agent="")),
        scored_run(scenario=None),
    ]
    for now in (0, 1, 2**64 - 1):
        for resource in (None, {}, {"service.name": "ts", "n": 3, "tags": ("a", "b")}):
            encoded = encode_evaluation_logs(runs, resource, now_ns=now)
            assert ExportLogsServiceRequest.FromString(encoded).SerializeToString() == encoded
