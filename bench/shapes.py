"""The agent runs the benchmarks send: two realistic shapes of a 20-span GenAI agent trace.

- `tool_spans_trace`: an `invoke_agent` span, 9 `chat` spans (token usage, no messages), 8
  `execute_tool` spans with ~200 B JSON arguments and ~300 B results (about 1 in 10 failing),
  2 HTTP client spans; ~650 B/span. Tool calls are told by their `execute_tool` spans.
- `messages_trace`: the same outline, but every `chat` span carries its output messages with
  the `tool_call` parts, whose ids the `execute_tool` spans repeat (one tool fails per run):
  the shape SDKs with message capture on send, where the builder pairs calls with messages.

Both in the shape the GenAI semantic conventions describe, with the usual noise attributes.
"""

from __future__ import annotations

import json
import random

from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

TOOLS = ["search_docs", "read_file", "write_file", "run_sql", "http_get", "calculator"]
MESSAGE_TOOLS = ["search_docs", "read_file", "run_sql", "http_get", "calculator", "send_email"]


def kv(key: str, value: object) -> KeyValue:
    """One attribute."""
    pair = KeyValue(key=key)
    if isinstance(value, bool):
        pair.value.bool_value = value
    elif isinstance(value, int):
        pair.value.int_value = value
    elif isinstance(value, float):
        pair.value.double_value = value
    else:
        pair.value.string_value = str(value)
    return pair


def tag(n_pass: int) -> bytes:
    """The last 6 bytes of every `tool_spans_trace` id on pass `n_pass`: renewing ids is one
    replace of the serialized request."""
    return b"\xfe\xed" + n_pass.to_bytes(4, "big")


def _blob(rng: random.Random, size: int) -> str:
    words = " ".join(rng.choice(["alpha", "bravo", "delta", "echo", "kilo"]) for _ in range(8))
    return json.dumps({"query": words, "pad": "x" * max(0, size - len(words) - 22)})


def _span(
    tid: bytes, sid: bytes, parent: bytes, name: str, start: int, end: int, attrs: list
) -> Span:
    kind = Span.SPAN_KIND_CLIENT if name.startswith(("chat", "POST")) else Span.SPAN_KIND_INTERNAL
    span = Span(trace_id=tid, span_id=sid, parent_span_id=parent, name=name, kind=kind,
                start_time_unix_nano=start, end_time_unix_nano=end)  # fmt: skip
    span.attributes.extend(kv(k, v) for k, v in attrs)
    return span


def tool_spans_trace(rng: random.Random, t0: int) -> list[Span]:
    """One agent run of 20 spans, in the shape the GenAI conventions describe."""
    tid, root_id = rng.randbytes(10) + tag(0), rng.randbytes(8)
    agent = rng.choice(["triage", "planner", "coder", "researcher"])
    root_attrs = [
        ("gen_ai.operation.name", "invoke_agent"),
        ("gen_ai.agent.name", agent),
        ("gen_ai.agent.id", f"asst_{rng.getrandbits(48):012x}"),
        ("gen_ai.conversation.id", f"conv_{rng.getrandbits(64):016x}"),
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.model", "gpt-4.1"),
    ]
    root = _span(tid, root_id, b"", f"invoke_agent {agent}", t0, 0, root_attrs)
    spans, t = [root], t0 + 1_000_000
    for n in range(9):
        chat_attrs = [
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.provider.name", "openai"),
            ("gen_ai.request.model", "gpt-4.1"),
            ("gen_ai.response.model", "gpt-4.1-2025"),
            ("gen_ai.response.id", f"chatcmpl-{rng.getrandbits(96):024x}"),
            ("gen_ai.request.temperature", 0.2),
            ("gen_ai.request.max_tokens", 4096),
            ("gen_ai.usage.input_tokens", rng.randint(500, 9000)),
            ("gen_ai.usage.output_tokens", rng.randint(20, 800)),
            ("gen_ai.response.finish_reasons", "tool_calls" if n < 8 else "stop"),
            ("server.address", "api.openai.com"),
            ("server.port", 443),
        ]
        chat = _span(tid, rng.randbytes(8), root_id, "chat gpt-4.1", t, t + 900_000_000, chat_attrs)
        spans.append(chat)
        if n < 2:
            http_attrs = [
                ("http.request.method", "POST"),
                ("server.address", "api.openai.com"),
                ("url.full", "https://api.openai.com/v1/chat/completions"),
                ("server.port", 443),
                ("http.response.status_code", 200),
                ("network.protocol.version", "1.1"),
            ]
            end = t + 800_000_000
            spans.append(_span(tid, rng.randbytes(8), chat.span_id, "POST", t + 1, end, http_attrs))
        t += 1_000_000_000
        if n < 8:
            tool = rng.choice(TOOLS)
            tool_attrs = [
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", tool),
                ("gen_ai.tool.type", "function"),
                ("gen_ai.tool.call.id", f"call_{rng.getrandbits(96):024x}"),
                ("gen_ai.tool.description", f"Tool {tool} used by the agent"),
                ("gen_ai.tool.call.arguments", _blob(rng, 200)),
                ("gen_ai.tool.call.result", _blob(rng, 300)),
            ]
            name = f"execute_tool {tool}"
            span = _span(tid, rng.randbytes(8), root_id, name, t, t + 100_000_000, tool_attrs)
            if rng.random() < 0.1:
                span.status.code = Status.STATUS_CODE_ERROR
                span.attributes.append(kv("error.type", "TimeoutError"))
            spans.append(span)
            t += 200_000_000
    root.end_time_unix_nano = t + 1_000_000
    return spans


def _message_blob(rng: random.Random, size: int) -> str:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    data: dict[str, object] = {"query": " ".join(rng.choice(words) for _ in range(6))}
    data["note"] = "".join(rng.choices("abcdefgh ", k=max(0, size - 40)))  # one call: fast
    return json.dumps(data, separators=(",", ":"))


def messages_trace(rng: random.Random, t0: int) -> list[Span]:
    trace_id, root_id = rng.randbytes(16), rng.randbytes(8)
    agent = rng.choice(["triage", "planner", "coder"])
    root = Span(trace_id=trace_id, span_id=root_id, name=f"invoke_agent {agent}", kind=1)
    root.start_time_unix_nano = t0
    root.attributes.extend(
        [
            kv("gen_ai.operation.name", "invoke_agent"),
            kv("gen_ai.agent.name", agent),
            kv("gen_ai.agent.id", f"asst_{rng.getrandbits(48):012x}"),
            kv("gen_ai.conversation.id", f"conv_{rng.getrandbits(64):016x}"),
            kv("gen_ai.provider.name", "openai"),
            kv("gen_ai.request.model", "gpt-4.1"),
        ]
    )
    spans, t = [root], t0 + 1_000_000
    for step in range(9):
        tool = rng.choice(MESSAGE_TOOLS) if step < 8 else None
        call_id = f"call_{rng.getrandbits(96):024x}"
        chat_id, dur = rng.randbytes(8), rng.randint(300, 2500) * 1_000_000
        chat = Span(trace_id=trace_id, span_id=chat_id, parent_span_id=root_id, kind=3)
        chat.name, chat.start_time_unix_nano, chat.end_time_unix_nano = "chat gpt-4.1", t, t + dur
        part = (
            {"type": "tool_call", "id": call_id, "name": tool, "arguments": {"q": "x"}}
            if tool
            else {"type": "text", "content": "Here is the answer."}
        )
        chat.attributes.extend(
            [
                kv("gen_ai.operation.name", "chat"),
                kv("gen_ai.provider.name", "openai"),
                kv("gen_ai.request.model", "gpt-4.1"),
                kv("gen_ai.response.model", "gpt-4.1-2025-04-14"),
                kv("gen_ai.response.id", f"chatcmpl-{rng.getrandbits(96):024x}"),
                kv("gen_ai.request.temperature", 0.2),
                kv("gen_ai.usage.input_tokens", rng.randint(500, 9000)),
                kv("gen_ai.usage.output_tokens", rng.randint(20, 800)),
                kv("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [part]}])),
                kv("server.address", "api.openai.com"),
                kv("server.port", 443),
            ]
        )
        spans.append(chat)
        if step < 2:
            http = Span(trace_id=trace_id, span_id=rng.randbytes(8), parent_span_id=chat_id)
            http.name, http.kind = "POST", 3
            http.start_time_unix_nano, http.end_time_unix_nano = t + 100_000, t + dur - 100_000
            http.attributes.extend(
                [
                    kv("http.request.method", "POST"),
                    kv("url.full", "https://api.openai.com/v1/chat/completions"),
                    kv("http.response.status_code", 200),
                ]
            )
            spans.append(http)
        t += dur + 200_000
        if tool is None:
            break
        dur = rng.randint(5, 900) * 1_000_000
        execution = Span(trace_id=trace_id, span_id=rng.randbytes(8), parent_span_id=root_id)
        execution.name, execution.kind = f"execute_tool {tool}", 1
        execution.start_time_unix_nano, execution.end_time_unix_nano = t, t + dur
        execution.attributes.extend(
            [
                kv("gen_ai.operation.name", "execute_tool"),
                kv("gen_ai.tool.name", tool),
                kv("gen_ai.tool.type", "function"),
                kv("gen_ai.tool.call.id", call_id),
                kv("gen_ai.tool.description", f"Tool {tool} used by the agent"),
                kv("gen_ai.tool.call.arguments", _message_blob(rng, 200)),
                kv("gen_ai.tool.call.result", _message_blob(rng, 300)),
            ]
        )
        if step == 3:
            execution.status.code = Status.STATUS_CODE_ERROR
            execution.attributes.append(kv("error.type", "TimeoutError"))
        spans.append(execution)
        t += dur + 200_000
    root.end_time_unix_nano = t + 1_000_000
    assert len(spans) == 20, len(spans)
    return spans
