"""OTLP/JSON test documents as protobuf, through the protobuf library's own JSON mapping."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

__all__ = ["base64_ids", "request_bodies", "request_from_otlp_json", "request_of"]


def base64_ids(node: Any) -> Any:
    """`node` with its hex ids as base64: OTLP/JSON writes ids as hex, protobuf's generic JSON
    mapping wants base64 for bytes."""
    if isinstance(node, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else base64_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [base64_ids(v) for v in node]
    return node


def request_from_otlp_json(document: dict[str, Any]) -> ExportTraceServiceRequest:
    """An OTLP/JSON ExportTraceServiceRequest document parsed by the protobuf library."""
    return json_format.ParseDict(base64_ids(document), ExportTraceServiceRequest())


def request_bodies(path: Path) -> list[bytes]:
    """Every request of an OTLP/JSON file (one document, or JSON Lines) as protobuf bytes."""
    text = path.read_text()
    try:
        documents = [json.loads(text)]
    except json.JSONDecodeError:  # JSON Lines
        documents = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [request_from_otlp_json(d).SerializeToString() for d in documents]


def request_of(*spans: Span) -> bytes:
    """A serialized request holding `spans` under one resource and scope."""
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.extend(spans)
    return request.SerializeToString()
