"""Edge cases of plain GenAI tool, chat and agent spans (keys of other objects or types,
unusual values): the flat-run tests build each as the one step of a run, with and without the
fast path. `EDGE_CASES`: (what, span, whether it is a plain GenAI span)."""

from __future__ import annotations

from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanEvent, SpanRecord, StatusCode
from tracescore.trajectory import _classify
from trajectory.spans import span

__all__ = ["EDGE_CASES", "without_dropped"]


def _tool(attrs: dict[str, Any], **kw: Any) -> SpanRecord:
    base = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
        semconv.GEN_AI_TOOL_NAME: "lookup",
        semconv.GEN_AI_TOOL_CALL_ID: "call_1",
        semconv.GEN_AI_TOOL_CALL_ARGUMENTS: '{"q": "x"}',
        semconv.GEN_AI_TOOL_CALL_RESULT: '{"ok": true}',
    }
    return span(2, "execute_tool lookup", 1, attrs={**base, **attrs}, **kw)


def _chat(attrs: dict[str, Any], **kw: Any) -> SpanRecord:
    base = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT,
        semconv.GEN_AI_REQUEST_MODEL: "gpt-4.1",
        semconv.GEN_AI_RESPONSE_MODEL: "gpt-4.1-2025",
        semconv.GEN_AI_USAGE_INPUT_TOKENS: 10,
        semconv.GEN_AI_USAGE_OUTPUT_TOKENS: 3,
    }
    return span(3, "chat gpt-4.1", 1, attrs={**base, **attrs}, **kw)


def _agent(attrs: dict[str, Any], **kw: Any) -> SpanRecord:
    base = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT,
        semconv.GEN_AI_AGENT_NAME: "triage",
        semconv.GEN_AI_AGENT_ID: "asst_1",
        semconv.GEN_AI_REQUEST_MODEL: "gpt-4.1",
    }
    return span(1, "invoke_agent triage", None, attrs={**base, **attrs}, **kw)


class _Key(str):
    __slots__ = ()


def _with_keys(record: SpanRecord, rekey: Any) -> SpanRecord:
    """`record` with each attribute key replaced by `rekey(key)` (an equal key, other object)."""
    attrs = {rekey(k): v for k, v in record.attributes.items()}
    return SpanRecord(**{**{f: getattr(record, f) for f in record.__slots__}, "attributes": attrs})


_EVENT = SpanEvent(semconv.EXCEPTION_EVENT, 5, {semconv.EXCEPTION_TYPE: "ValueError"})
_DROP: Any = object()

EDGE_CASES: list[tuple[str, SpanRecord, bool]] = [
    # (what, span, whether it is a plain GenAI span)
    ("plain tool", _tool({}), True),
    ("plain chat", _chat({}), True),
    ("status error", _tool({}, status=StatusCode.ERROR, message="boom"), True),
    ("status error, no message", _tool({}, status=StatusCode.ERROR), True),
    ("status ok", _tool({}, status=StatusCode.OK), True),
    ("error.type", _tool({semconv.ERROR_TYPE: "tool_error"}), True),
    ("error.type, status ok", _tool({semconv.ERROR_TYPE: "E"}, status=StatusCode.OK), True),
    ("empty error.type", _tool({semconv.ERROR_TYPE: ""}), True),
    ("int error.type", _tool({semconv.ERROR_TYPE: 500}), False),
    ("non-ASCII error.type", _tool({semconv.ERROR_TYPE: "Fehlerö"}), False),
    ("non-ASCII message", _tool({}, status=StatusCode.ERROR, message="kaputt ö"), False),
    ("non-ASCII message, no error", _tool({}, message="ö"), True),
    (
        "error.message",
        _tool({semconv.ERROR_TYPE: "E", semconv.ERROR_MESSAGE: "why"}, status=StatusCode.ERROR),
        True,
    ),
    (
        "status message over error.message",
        _tool({semconv.ERROR_MESSAGE: "second"}, status=StatusCode.ERROR, message="first"),
        True,
    ),
    (
        "non-ASCII error.message",
        _tool({semconv.ERROR_MESSAGE: "ö"}, status=StatusCode.ERROR),
        False,
    ),
    ("bytes error.message", _tool({semconv.ERROR_MESSAGE: b"x"}, status=StatusCode.ERROR), False),
    (
        "failed call, isError result",
        _tool({semconv.GEN_AI_TOOL_CALL_RESULT: '{"isError": true}'}, status=StatusCode.ERROR),
        True,
    ),
    ("events", _tool({}, events=(_EVENT,)), False),
    ("non-ASCII tool name", _tool({semconv.GEN_AI_TOOL_NAME: "suche_ö"}), False),
    ("empty tool name", _tool({semconv.GEN_AI_TOOL_NAME: ""}), False),
    ("no tool name", _tool({semconv.GEN_AI_TOOL_NAME: _DROP}), False),
    ("int call id", _tool({semconv.GEN_AI_TOOL_CALL_ID: 42}), False),
    ("padded call id", _tool({semconv.GEN_AI_TOOL_CALL_ID: " call_1 \t"}), True),
    ("odd whitespace id", _tool({semconv.GEN_AI_TOOL_CALL_ID: "\x1c\x0bcall_1\x1f"}), True),
    ("empty call id", _tool({semconv.GEN_AI_TOOL_CALL_ID: ""}), True),
    ("blank call id", _tool({semconv.GEN_AI_TOOL_CALL_ID: "  "}), True),
    ("no call id", _tool({semconv.GEN_AI_TOOL_CALL_ID: _DROP}), True),
    ("non-ASCII call id", _tool({semconv.GEN_AI_TOOL_CALL_ID: "cäll"}), False),
    ("no arguments", _tool({semconv.GEN_AI_TOOL_CALL_ARGUMENTS: _DROP}), True),
    ("no result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: _DROP}), True),
    ("isError result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: '{"isError": true}'}), False),
    ("escaped result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: '"a\\"b"'}), False),
    ("non-ASCII result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: '{"a": "ö€😀"}'}), True),
    ("non-ASCII error result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: '"ö error"'}), False),
    ("bytes arguments", _tool({semconv.GEN_AI_TOOL_CALL_ARGUMENTS: b'{"q": 1}'}), False),
    ("bytes result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: b"ok"}), False),
    ("None result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: None}), False),
    ("dict arguments", _tool({semconv.GEN_AI_TOOL_CALL_ARGUMENTS: {"q": 1}}), False),
    ("huge result", _tool({semconv.GEN_AI_TOOL_CALL_RESULT: "x" * 20000}), True),
    ("bool tokens", _chat({semconv.GEN_AI_USAGE_INPUT_TOKENS: True}), False),
    ("float tokens", _chat({semconv.GEN_AI_USAGE_OUTPUT_TOKENS: 3.0}), False),
    ("text tokens", _chat({semconv.GEN_AI_USAGE_OUTPUT_TOKENS: "3"}), False),
    ("missing tokens", _chat({semconv.GEN_AI_USAGE_INPUT_TOKENS: _DROP}), True),
    (
        "prompt tokens",
        _chat({semconv.GEN_AI_USAGE_INPUT_TOKENS: _DROP, semconv.GEN_AI_USAGE_PROMPT_TOKENS: 7}),
        True,
    ),
    (
        "float completion tokens",
        _chat(
            {
                semconv.GEN_AI_USAGE_OUTPUT_TOKENS: _DROP,
                semconv.GEN_AI_USAGE_COMPLETION_TOKENS: 7.0,
            }
        ),
        False,
    ),
    ("empty response model", _chat({semconv.GEN_AI_RESPONSE_MODEL: ""}), True),
    (
        "empty models",
        _chat({semconv.GEN_AI_RESPONSE_MODEL: "", semconv.GEN_AI_REQUEST_MODEL: ""}),
        True,
    ),
    (
        "no models",
        _chat({semconv.GEN_AI_RESPONSE_MODEL: _DROP, semconv.GEN_AI_REQUEST_MODEL: _DROP}),
        True,
    ),
    (
        "empty response model, bytes request model",
        _chat({semconv.GEN_AI_RESPONSE_MODEL: "", semconv.GEN_AI_REQUEST_MODEL: b"m"}),
        False,
    ),
    ("bytes request model only", _chat({semconv.GEN_AI_REQUEST_MODEL: b"m"}), True),
    ("non-ASCII model", _chat({semconv.GEN_AI_RESPONSE_MODEL: "módel"}), False),
    ("output messages", _chat({semconv.GEN_AI_OUTPUT_MESSAGES: "[]"}), False),
    ("input messages", _chat({semconv.GEN_AI_INPUT_MESSAGES: None}), False),
    ("tool definitions", _chat({semconv.GEN_AI_TOOL_DEFINITIONS: "[]"}), False),
    ("chat with error status", _chat({}, status=StatusCode.ERROR), True),
    ("generate_content", _chat({semconv.GEN_AI_OPERATION_NAME: "generate_content"}), True),
    ("text_completion", _chat({semconv.GEN_AI_OPERATION_NAME: "text_completion"}), True),
    ("nameless agent", _chat({semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT}), False),
    ("plain agent", _agent({}), True),
    ("agent, status and events", _agent({}, status=StatusCode.ERROR, events=(_EVENT,)), True),
    ("agent, empty name", _agent({semconv.GEN_AI_AGENT_NAME: ""}), False),
    ("agent, blank name", _agent({semconv.GEN_AI_AGENT_NAME: " "}), True),
    ("agent, non-ASCII name", _agent({semconv.GEN_AI_AGENT_NAME: "büro"}), False),
    ("agent, bytes name", _agent({semconv.GEN_AI_AGENT_NAME: b"triage"}), False),
    ("agent, int name", _agent({semconv.GEN_AI_AGENT_NAME: 3}), False),
    ("agent, no name", _agent({semconv.GEN_AI_AGENT_NAME: _DROP}), False),
    ("agent, input messages", _agent({semconv.GEN_AI_INPUT_MESSAGES: "[]"}), False),
    ("agent, None input messages", _agent({semconv.GEN_AI_INPUT_MESSAGES: None}), False),
    ("agent, output messages", _agent({semconv.GEN_AI_OUTPUT_MESSAGES: "[]"}), False),
    ("agent, tool definitions", _agent({semconv.GEN_AI_TOOL_DEFINITIONS: "[]"}), False),
    ("agent, OpenInference marker", _agent({semconv.OI_SPAN_KIND: "AGENT"}), False),
    ("agent, pydantic-ai scope", _agent({}, scope=semconv.PYDANTIC_AI_SCOPE), False),
    ("agent, non-ASCII span name", span(4, "invoke_agent ö", 1, attrs=_agent({}).attributes), True),
    ("no operation, plain name", span(4, "POST", 1), True),
    ("no operation, non-ASCII name", span(4, "GET /ö", 1), True),
    ("no operation, empty name", span(4, "", 1), True),
    ("no operation, other attributes", span(4, "db", 1, attrs={"db.system": "pg"}), True),
    ("no operation, tool name", span(4, "execute_tool x", 1), False),
    ("no operation, bare tool name", span(4, "execute_tool", 1), True),
    ("no operation, agent name", span(4, "invoke_agent", 1), False),
    ("no operation, agent name prefix", span(4, "invoke_agentX", 1), False),
    ("no operation, Vercel name", span(4, "ai.generateText", 1), False),
    ("no operation, marker", span(4, "x", 1, attrs={semconv.MASTRA_SPAN_TYPE: "x"}), False),
    ("embeddings", _chat({semconv.GEN_AI_OPERATION_NAME: "embeddings"}), False),
    ("bytes operation", _chat({semconv.GEN_AI_OPERATION_NAME: b"chat"}), False),
    ("no operation", _tool({semconv.GEN_AI_OPERATION_NAME: _DROP}), False),
    ("OpenInference marker", _tool({semconv.OI_SPAN_KIND: "TOOL", "tool.name": "x"}), False),
    ("Traceloop marker", _chat({semconv.LLM_REQUEST_TYPE: "chat"}), False),
    ("Mastra marker", _chat({semconv.MASTRA_SPAN_TYPE: "model_generation"}), False),
    ("Vercel marker", _chat({semconv.AI_OPERATION_ID: "ai.generateText"}), False),
    *[
        (f"pydantic-ai marker {key}", _tool({key: "x"}), False)
        for key in sorted(_classify._PYDANTIC_AI_MARKERS)
    ],
    ("pydantic-ai scope", _tool({}, scope=semconv.PYDANTIC_AI_SCOPE), False),
    ("other scope", _tool({}, scope="pydantic-ai-x"), True),
    ("Vercel name", span(4, "ai.toolCall", 1, attrs=_tool({}).attributes), False),
    ("short name", span(4, "a", 1, attrs=_chat({}).attributes), True),
    # Keys are found in one pass over the attributes: by object, else by text.
    ("keys of other objects", _with_keys(_tool({}), lambda k: "".join(list(k))), True),
    ("chat keys of other objects", _with_keys(_chat({}), lambda k: "".join(list(k))), True),
    ("a key of a str subclass", _with_keys(_tool({}), _Key), False),
    ("an int key", _tool({7: "x"}), False),  # type: ignore[dict-item]
    ("a bytes key", _chat({b"gen_ai.operation.name": "x"}), False),  # type: ignore[dict-item]
    ("many other keys", _tool({f"k{n}": n for n in range(300)}), True),
]


def without_dropped(record: SpanRecord) -> SpanRecord:
    attrs = {k: v for k, v in record.attributes.items() if v is not _DROP}
    return SpanRecord(**{**{f: getattr(record, f) for f in record.__slots__}, "attributes": attrs})
