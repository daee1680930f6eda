"""Small agent traces made with the real OpenTelemetry SDK, as OTLP JSON, for CLI tests.

The spans follow the OTel GenAI conventions (an `invoke_agent` span with `execute_tool`
children), are recorded by an InMemorySpanExporter and encoded by the SDK's own OTLP encoder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.trace import Status, StatusCode

from recording import recording_provider, spans_to_otlp_json
from tracescore import semconv

Call = tuple[str, dict[str, Any], bool]  # tool name, arguments, ok


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
    provider, memory = recording_provider(
        {"service.name": service, "service.instance.id": "i-1"}, seed
    )
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
    body = spans_to_otlp_json(memory.get_finished_spans())
    provider.shutdown()
    return body


def jsonl(*requests: dict[str, Any]) -> str:
    """Requests as JSON Lines, the collector `file` exporter's format."""
    return "".join(json.dumps(r) + "\n" for r in requests)
