"""OTLP/JSON test documents as protobuf, through the protobuf library's own JSON mapping."""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = ["base64_ids", "request_from_otlp_json"]


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
