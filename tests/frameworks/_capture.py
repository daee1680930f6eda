"""Capture spans with the real OpenTelemetry SDK and write them as canonical OTLP JSON.

Ids come from a deterministic generator seeded by the case name, so regenerated files differ
from the committed ones only where a framework changed what it records (plus clocks and uuids).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

__all__ = ["Capture", "otlp_json"]

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


class CaseIds(IdGenerator):
    """Trace and span ids derived from the case name: `<case hash>` + a counter."""

    def __init__(self) -> None:
        self.reset("unset")

    def reset(self, case: str) -> None:
        digest = hashlib.sha256(case.encode()).hexdigest()
        self._trace_base = int(digest[:28], 16) << 16
        self._span_base = int(digest[32:44], 16) << 16
        self._traces = 0
        self._spans = 0

    def generate_trace_id(self) -> int:
        self._traces += 1
        return self._trace_base | self._traces

    def generate_span_id(self) -> int:
        self._spans += 1
        return self._span_base | self._spans


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """ReadableSpans -> ExportTraceServiceRequest JSON with hex ids, via the SDK's own encoder.

    protobuf's JSON mapping writes bytes as base64; OTLP/JSON wants hex trace and span ids.
    """

    def fix(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {
                k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else fix(v)
                for k, v in obj.items()
            }
        if isinstance(obj, list):
            return [fix(x) for x in obj]
        return obj

    doc: dict[str, Any] = fix(MessageToDict(encode_spans(spans), use_integers_for_enums=True))
    return doc


class Capture:
    """One tracer provider whose spans are cut into one OTLP JSON file per case."""

    def __init__(self, framework: str, out_dir: Path) -> None:
        self.framework = framework
        self.out_dir = out_dir
        self.ids = CaseIds()
        self.memory = InMemorySpanExporter()
        resource = Resource.create({"service.name": f"tracescore-test-{framework}"})
        self.provider = TracerProvider(resource=resource, id_generator=self.ids)
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.written: list[Path] = []

    @contextmanager
    def case(self, name: str) -> Iterator[None]:
        """Spans ended inside the block become `<framework>-<name>.otlp.json`."""
        self.provider.force_flush()
        self.memory.clear()
        self.ids.reset(f"{self.framework}-{name}")
        yield
        self.provider.force_flush()
        spans = self.memory.get_finished_spans()
        if not spans:
            raise RuntimeError(f"{self.framework}-{name}: no spans were captured")
        path = self.out_dir / f"{self.framework}-{name}.otlp.json"
        path.write_text(json.dumps(otlp_json(spans), indent=1) + "\n", encoding="utf-8")
        self.written.append(path)
