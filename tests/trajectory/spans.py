"""Small builders for hand-written spans in unit tests (real recordings live in testdata/)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode

TRACE = "0af7651916cd43dd8448eb211c80319c"


def sid(n: int) -> str:
    """A deterministic 16-hex span id."""
    return f"{n:016x}"


def span(
    n: int,
    name: str,
    parent: int | None = None,
    start: int = 0,
    end: int | None = None,
    attrs: Mapping[str, AttrValue] | None = None,
    status: StatusCode = StatusCode.UNSET,
    message: str = "",
    events: tuple[SpanEvent, ...] = (),
    trace: str = TRACE,
    scope: str = "",
) -> SpanRecord:
    """A span with id `sid(n)`, times in ms from an arbitrary epoch."""
    base = 1_700_000_000_000_000_000
    return SpanRecord(
        trace_id=trace,
        span_id=sid(n),
        parent_span_id=sid(parent) if parent is not None else None,
        name=name,
        start_ns=base + start * 1_000_000,
        end_ns=base + (end if end is not None else start + 1) * 1_000_000,
        status_code=status,
        status_message=message,
        attributes=dict(attrs or {}),
        events=events,
        scope=scope,
    )


def messages(*msgs: dict[str, Any]) -> str:
    """GenAI message JSON as producers send it: a JSON string."""
    return json.dumps(list(msgs))


def call(call_id: str | None, name: str, **arguments: Any) -> dict[str, Any]:
    """A `tool_call` part."""
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def assistant(*parts: dict[str, Any]) -> dict[str, Any]:
    """An assistant message."""
    return {"role": "assistant", "parts": list(parts)}


def user(text: str) -> dict[str, Any]:
    """A user message with one text part."""
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def text(content: str) -> dict[str, Any]:
    """A text part."""
    return {"type": "text", "content": content}


def response(call_id: str, payload: Any, key: str = "response") -> dict[str, Any]:
    """A tool message with one `tool_call_response` part."""
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, key: payload}]}


def agent(
    n: int, name: str, parent: int | None = None, start: int = 0, end: int = 100
) -> SpanRecord:
    """An `invoke_agent` span."""
    return span(
        n,
        f"invoke_agent {name}",
        parent,
        start,
        end,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name},
    )


def chat(
    n: int,
    parent: int,
    start: int,
    out: list[dict[str, Any]],
    inp: list[dict[str, Any]] | None = None,
    **extra: AttrValue,
) -> SpanRecord:
    """A `chat` span whose output messages are `out`."""
    attrs: dict[str, AttrValue] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.output.messages": messages(*out),
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 5,
    }
    if inp is not None:
        attrs["gen_ai.input.messages"] = messages(*inp)
    attrs.update(extra)
    return span(n, "chat m", parent, start, start + 2, attrs)


def tool(
    n: int,
    parent: int,
    start: int,
    name: str,
    call_id: str | None = None,
    status: StatusCode = StatusCode.UNSET,
    **extra: AttrValue,
) -> SpanRecord:
    """An `execute_tool` span."""
    attrs: dict[str, AttrValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
    }
    if call_id is not None:
        attrs["gen_ai.tool.call.id"] = call_id
    attrs.update(extra)
    return span(n, f"execute_tool {name}", parent, start, start + 1, attrs, status)
