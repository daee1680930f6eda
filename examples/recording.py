"""Helpers for the examples' trace generators (and the tests) that record real spans:
reproducible ids, OTLP JSON. Not part of the tracescore package: they need the OpenTelemetry
SDK's trace side and OTLP encoder (`pip install tracescore[test]`), which the service does not.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

__all__ = ["SeededIds", "recording_provider", "spans_to_otlp_json"]

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


class SeededIds(IdGenerator):
    """Reproducible trace and span ids, so a regenerated file differs only in times."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


def recording_provider(
    resource: Mapping[str, str], seed: int
) -> tuple[TracerProvider, InMemorySpanExporter]:
    """A tracer provider with seeded ids whose finished spans collect in memory."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create(dict(resource)), id_generator=SeededIds(seed)
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def spans_to_otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """Spans as one OTLP JSON ExportTraceServiceRequest, via the SDK's own protobuf encoder.

    protobuf's JSON mapping writes ids as base64; OTLP/JSON wants hex, so ids are rewritten.
    """
    body: dict[str, Any] = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    return dict(_hex_ids(body))


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value
