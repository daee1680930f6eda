"""Protobuf OTLP spans of agent runs (OTel GenAI conventions) for serve tests.

The shapes follow what pydantic-ai and the OpenAI Agents instrumentation export (an
`invoke_agent` span over `chat` and `execute_tool` spans); ids are deterministic per seed so a
test can name every span it expects back.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

__all__ = [
    "AgentRun",
    "agent_run",
    "framework_request",
    "kv",
    "request",
    "span_ids",
]

T0 = 1_760_000_000_000_000_000
TESTDATA = Path(__file__).resolve().parents[1] / "testdata"


def kv(key: str, value: object) -> KeyValue:
    """One attribute (str, bool, int or float)."""
    out = KeyValue(key=key)
    if isinstance(value, bool):
        out.value.bool_value = value
    elif isinstance(value, int):
        out.value.int_value = value
    elif isinstance(value, float):
        out.value.double_value = value
    else:
        out.value.string_value = str(value)
    return out


@dataclass
class AgentRun:
    """One agent run's spans: the agent span and its children (children first, as exported)."""

    agent: Span
    children: list[Span] = field(default_factory=list)

    @property
    def trace_id(self) -> bytes:
        """The run's trace id."""
        return self.agent.trace_id

    @property
    def spans(self) -> list[Span]:
        """Children, then the agent span (the order a BatchSpanProcessor exports them)."""
        return [*self.children, self.agent]


def agent_run(
    agent: str = "shop_agent",
    tools: Sequence[str] = ("get_weather", "lookup_order"),
    *,
    failing: Iterable[str] = (),
    seed: int = 1,
    user_input: str = "where is my order 42?",
    extra_http: bool = True,
) -> AgentRun:
    """An agent span with one chat span per tool call plus a final one, and the tool spans."""
    rng = random.Random(seed)
    trace_id = rng.randbytes(16)
    agent_id = rng.randbytes(8)
    failing = set(failing)
    t = T0 + seed * 10_000_000_000
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": user_input}]}])
    root = Span(
        trace_id=trace_id,
        span_id=agent_id,
        name=f"invoke_agent {agent}",
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=t,
    )
    root.attributes.extend(
        [
            kv("gen_ai.operation.name", "invoke_agent"),
            kv("gen_ai.agent.name", agent),
            kv("gen_ai.input.messages", messages),
            kv("gen_ai.provider.name", "openai"),
        ]
    )
    run = AgentRun(root)
    for n, tool in enumerate(tools):
        call_id = f"call_{seed}_{n}"
        chat = Span(
            trace_id=trace_id,
            span_id=rng.randbytes(8),
            parent_span_id=agent_id,
            name="chat gpt-4.1",
            kind=Span.SPAN_KIND_CLIENT,
            start_time_unix_nano=t + 1,
            end_time_unix_nano=t + 1000,
        )
        parts = [{"type": "tool_call", "id": call_id, "name": tool, "arguments": {"n": n}}]
        chat.attributes.extend(
            [
                kv("gen_ai.operation.name", "chat"),
                kv("gen_ai.request.model", "gpt-4.1"),
                kv("gen_ai.usage.input_tokens", 100 + n),
                kv("gen_ai.usage.output_tokens", 10 + n),
                kv("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": parts}])),
                kv("server.address", "api.openai.com"),
            ]
        )
        run.children.append(chat)
        if extra_http:
            http = Span(
                trace_id=trace_id,
                span_id=rng.randbytes(8),
                parent_span_id=chat.span_id,
                name="POST",
                kind=Span.SPAN_KIND_CLIENT,
                start_time_unix_nano=t + 2,
                end_time_unix_nano=t + 900,
            )
            http.attributes.extend([kv("http.request.method", "POST"), kv("server.port", 443)])
            run.children.append(http)
        tool_span = Span(
            trace_id=trace_id,
            span_id=rng.randbytes(8),
            parent_span_id=agent_id,
            name=f"execute_tool {tool}",
            kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=t + 1001,
            end_time_unix_nano=t + 2000,
        )
        tool_span.attributes.extend(
            [
                kv("gen_ai.operation.name", "execute_tool"),
                kv("gen_ai.tool.name", tool),
                kv("gen_ai.tool.call.id", call_id),
                kv("gen_ai.tool.call.arguments", json.dumps({"n": n})),
                kv("gen_ai.tool.call.result", json.dumps({"ok": tool not in failing})),
            ]
        )
        if tool in failing:
            tool_span.status.code = Status.STATUS_CODE_ERROR
            tool_span.status.message = f"{tool} failed"
            tool_span.attributes.append(kv("error.type", "RuntimeError"))
        run.children.append(tool_span)
        t += 2000
    final = Span(
        trace_id=trace_id,
        span_id=rng.randbytes(8),
        parent_span_id=agent_id,
        name="chat gpt-4.1",
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=t + 1,
        end_time_unix_nano=t + 1000,
    )
    final.attributes.extend(
        [kv("gen_ai.operation.name", "chat"), kv("gen_ai.usage.input_tokens", 5)]
    )
    run.children.append(final)
    root.end_time_unix_nano = t + 2000
    return run


def request(
    spans: Iterable[Span], service: str = "shop", scope: str = "opentelemetry.instrumentation.x"
) -> ExportTraceServiceRequest:
    """One request holding `spans` under one resource and scope."""
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend(
        [kv("service.name", service), kv("deployment.environment", "test")]
    )
    ss = rs.scope_spans.add()
    ss.scope.name = scope
    ss.spans.extend(spans)
    return req


def framework_request(name: str) -> ExportTraceServiceRequest:
    """A real framework trace kept in tests/testdata/serve (`pydantic_ai-subagent`, ...)."""
    from tracescore.receiver import parse_json_request

    path = TESTDATA / "serve" / f"{name}.otlp.json"
    return parse_json_request(path.read_bytes())


def span_ids(spans: Iterable[Span]) -> list[bytes]:
    """Span ids, for set comparisons."""
    return [s.span_id for s in spans]
