"""Small agent traces made with the real OpenTelemetry SDK, as OTLP JSON, for CLI tests.

The spans follow the OTel GenAI conventions (an `invoke_agent` span with `execute_tool`
children), are recorded by an InMemorySpanExporter and encoded by the SDK's own OTLP encoder.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Sequence
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Status, StatusCode

from tracescore import semconv

Call = tuple[str, dict[str, Any], bool]  # tool name, arguments, ok


class _SeededIds(IdGenerator):
    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


def agent_trace(
    agent: str,
    user_input: str,
    calls: Sequence[Call] = (),
    *,
    output: str = "done",
    seed: int = 1,
    service: str = "test-service",
) -> dict[str, Any]:
    """One agent run as an OTLP JSON ExportTraceServiceRequest (hex ids)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "service.instance.id": "i-1"}),
        id_generator=_SeededIds(seed),
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("tests")
    messages = [{"role": "user", "parts": [{"type": "text", "content": user_input}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": output}]}]
    with tracer.start_as_current_span(f"invoke_agent {agent}") as root:
        root.set_attribute(semconv.GEN_AI_OPERATION_NAME, semconv.OP_INVOKE_AGENT)
        root.set_attribute(semconv.GEN_AI_AGENT_NAME, agent)
        root.set_attribute(semconv.GEN_AI_INPUT_MESSAGES, json.dumps(messages))
        root.set_attribute(semconv.GEN_AI_OUTPUT_MESSAGES, json.dumps(answer))
        for index, (name, arguments, ok) in enumerate(calls):
            with tracer.start_as_current_span(f"execute_tool {name}") as span:
                span.set_attribute(semconv.GEN_AI_OPERATION_NAME, semconv.OP_EXECUTE_TOOL)
                span.set_attribute(semconv.GEN_AI_TOOL_NAME, name)
                span.set_attribute(semconv.GEN_AI_TOOL_CALL_ID, f"call_{index}")
                span.set_attribute(semconv.GEN_AI_TOOL_CALL_ARGUMENTS, json.dumps(arguments))
                if not ok:
                    span.set_status(Status(StatusCode.ERROR, "tool failed"))
                    span.set_attribute(semconv.ERROR_TYPE, "ToolError")
    provider.force_flush()
    body = MessageToDict(encode_spans(memory.get_finished_spans()), use_integers_for_enums=True)
    provider.shutdown()
    return dict(_hex_ids(body))


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def jsonl(*requests: dict[str, Any]) -> str:
    """Requests as JSON Lines, the collector `file` exporter's format."""
    return "".join(json.dumps(r) + "\n" for r in requests)
