"""What the OpenAI Agents SDK's two instrumentations record beyond their conventions.

- Handoffs: `opentelemetry-instrumentation-openai-agents-v2` writes an `agent_handoff` span
  (`gen_ai.handoff.from_agent` / `to_agent`); OpenInference a TOOL span named
  `handoff to <agent>`. Both become one `handoff` view, joined to the model's
  `transfer_to_<agent>` call like a tool execution.
- The chat-completions answer: openai-agents-v2 0.1.0 writes a model answer that asked for tools
  as ONE text part holding the Python repr of the OpenAI message (`{'content': None, ...,
  'tool_calls': [...]}`). Read as text, it made the run's "final answer" that repr and lost the
  calls' ids; `openai_message_parts` turns it back into text and `tool_call` parts.
- Approvals: a tool with `needs_approval=True` stops the run, and both instrumentations export
  its span with status OK and no result; `awaits_approval` says which executions those are. A
  rejection is only told to the model in the resumed run (`OPENAI_AGENTS_REJECTION_MESSAGE`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory._values import as_text
from tracescore.trajectory._views import MISSING, SpanView

__all__ = [
    "awaits_approval",
    "function_style",
    "genai_handoff",
    "handoff_tool_name",
    "is_message_repr",
    "openai_message_parts",
]

# The repr of an OpenAI ChatCompletionMessage dict, as openai-agents-v2 writes it. Bounded: a
# repr longer than this is left as text (literal_eval of a huge value costs its size in memory).
_REPR_START = "{'content': "
_REPR_MARK = "'role': 'assistant'"
_MAX_REPR_CHARS = 1 << 20


def function_style(name: str) -> str:
    """openai-agents' `transform_string_function_style`: the default handoff tool name."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", name.replace(" ", "_")).lower()


def handoff_tool_name(agent: str) -> str:
    """The SDK's default name for the tool that hands off to `agent`."""
    return semconv.OPENAI_AGENTS_HANDOFF_TOOL_PREFIX + function_style(agent)


def genai_handoff(span: SpanRecord, convention: str) -> SpanView:
    """An `agent_handoff` span: a handoff view, or `other` when no target was recorded."""
    target = as_text(span.attributes.get(semconv.GEN_AI_HANDOFF_TO_AGENT))
    if not target:
        view = SpanView("other", convention)
        view.warnings = ("agent_handoff spans without gen_ai.handoff.to_agent (left out)",)
        return view
    return SpanView("handoff", convention, handoff_tool_name(target), agent_name=target)


def openai_message_parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with each repr'd OpenAI message part turned into text and `tool_call` parts."""
    if not any(_has_repr(m) for m in messages):  # the common case: nothing to rewrite
        return messages
    out: list[dict[str, Any]] = []
    for message in messages:
        parts = message.get(semconv.MSG_PARTS)
        if not isinstance(parts, list):
            out.append(message)
            continue
        rewritten: list[Any] = []
        for part in parts:
            rewritten.extend(_unrepr(part))
        out.append({**message, semconv.MSG_PARTS: rewritten})
    return out


def _has_repr(message: dict[str, Any]) -> bool:
    parts = message.get(semconv.MSG_PARTS)
    return isinstance(parts, list) and any(_repr_text(p) is not None for p in parts)


def is_message_repr(content: object) -> bool:
    """Whether a text part's `content` is the repr of an OpenAI message, which
    `openai_message_parts` rewrites."""
    return (
        isinstance(content, str)
        and content.startswith(_REPR_START)
        and _REPR_MARK in content
        and len(content) <= _MAX_REPR_CHARS
    )


def _repr_text(part: object) -> str | None:
    if not isinstance(part, dict) or part.get(semconv.PART_TYPE) != semconv.PART_TEXT:
        return None
    text = part.get(semconv.PART_CONTENT)
    return text if is_message_repr(text) else None


def _unrepr(part: object) -> list[Any]:
    text = _repr_text(part)
    if text is None:
        return [part]
    try:
        message = ast.literal_eval(text)  # literals only: no name lookup, no call
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return [part]
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return [part]
    out: list[Any] = []
    content = message.get("content")
    if isinstance(content, str) and content:
        out.append({semconv.PART_TYPE: semconv.PART_TEXT, semconv.PART_CONTENT: content})
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        out.append(
            {
                semconv.PART_TYPE: semconv.PART_TOOL_CALL,
                semconv.PART_ID: call.get("id"),
                semconv.PART_NAME: function["name"],
                semconv.PART_ARGUMENTS: function.get("arguments", MISSING),
            }
        )
    return out


def awaits_approval(
    span: SpanRecord,
    error: bool | None,
    pause_reason: str | None,
    result: Any,
    after_last_model: bool,
) -> bool:
    """Whether an OpenAI Agents tool execution is a call stopped for an approval.

    Such a span has status OK and no result, and nothing of the run follows it: the SDK
    returned the interruption instead of calling the model again. Arguments are not required
    (content capture off records none, and a receiver may leave them undecoded). A run that
    ended on a tool for another reason looks the same and is read as paused too: with
    `tool_use_behavior="stop_on_first_tool"`, a tool that returned None, or any tool when
    content capture is off (the trace records nothing that tells them apart).
    """
    return (
        after_last_model
        and span.scope in semconv.OPENAI_AGENTS_SCOPES
        and not error
        and pause_reason is None
        and result is MISSING
    )
