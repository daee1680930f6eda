"""Vercel AI SDK legacy telemetry: `ai.generateText` › `ai.generateText.doGenerate` + `ai.toolCall`.

The SDK has no agent concept, so these spans never start a run: the trace root is the run, and
the top-level `ai.*` span lends it a name (`ai.telemetry.functionId`), the prompt and the answer.
Model spans list the calls they asked for in `ai.response.toolCalls` (`args` in AI SDK 4, `input`
in 5) and see results (or `execution-denied`) in `ai.prompt.messages`. Do not rely on the tool
span's parent (the docs and real traces disagree). The GenAI spans of `@ai-sdk/otel` are read by
the GenAI reader. Source: conventions.md §3 and the §8 table.
"""

from __future__ import annotations

from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory._common import error_info
from tracescore.trajectory._genai import cut
from tracescore.trajectory._messages import input_text, make_response, tool_names
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import (
    as_text,
    clean_id,
    first_int,
    parse_json,
    parse_lenient,
)
from tracescore.trajectory._views import (
    MISSING,
    Convention,
    ModelInput,
    Response,
    SpanView,
    ToolRequest,
)

__all__ = ["VERCEL"]

NAME = "vercel"


def read(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """A Vercel legacy view of `span`, or None when it is not an `ai.*` span."""
    attrs = span.attributes
    op_id = as_text(attrs.get(semconv.AI_OPERATION_ID))
    if op_id is None:
        if not span.name.startswith(semconv.AI_SPAN_PREFIX):
            return None
        op_id = span.name
    if op_id == semconv.AI_TOOL_CALL_SPAN:
        return _tool(span, options)
    if op_id in semconv.AI_MODEL_OPERATIONS:
        return _model(span, options)
    limit = options.max_value_chars
    return SpanView(
        "other",
        NAME,
        agent_name=as_text(attrs.get(semconv.AI_FUNCTION_ID))
        or as_text(attrs.get(semconv.AI_RESOURCE_NAME)),
        input=cut(input_text(attrs.get(semconv.AI_PROMPT)), limit),
        output=cut(as_text(attrs.get(semconv.AI_RESPONSE_TEXT)), limit),
    )


def _tool(span: SpanRecord, options: BuildOptions) -> SpanView:
    attrs = span.attributes
    limit = options.max_value_chars
    failed, error_type, message = error_info(span)
    view = SpanView(
        "tool",
        NAME,
        tool_name=as_text(attrs.get(semconv.AI_TOOL_CALL_NAME)),
        call_id=clean_id(attrs.get(semconv.AI_TOOL_CALL_ID)),
        error=failed,
        error_type=error_type,
        error_message=message,
    )
    if semconv.AI_TOOL_CALL_ARGS in attrs:
        view.arguments = parse_lenient(attrs[semconv.AI_TOOL_CALL_ARGS], limit)
    if semconv.AI_TOOL_CALL_RESULT in attrs:
        view.result = parse_lenient(attrs[semconv.AI_TOOL_CALL_RESULT], limit)
    return view


def _model(span: SpanRecord, options: BuildOptions) -> SpanView:
    attrs = span.attributes
    limit = options.max_value_chars
    input_tokens = first_int(
        attrs,
        semconv.AI_USAGE_PROMPT_TOKENS,
        semconv.AI_USAGE_INPUT_TOKENS,
        semconv.GEN_AI_USAGE_INPUT_TOKENS,
    )
    output_tokens = first_int(
        attrs,
        semconv.AI_USAGE_COMPLETION_TOKENS,
        semconv.AI_USAGE_OUTPUT_TOKENS,
        semconv.GEN_AI_USAGE_OUTPUT_TOKENS,
    )
    view = SpanView(
        "model",
        NAME,
        model=as_text(attrs.get(semconv.AI_RESPONSE_MODEL))
        or as_text(attrs.get(semconv.AI_MODEL_ID)),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        output=cut(as_text(attrs.get(semconv.AI_RESPONSE_TEXT)), limit),
    )
    if semconv.AI_RESPONSE_TOOL_CALLS in attrs:
        view.requests = _requests(attrs[semconv.AI_RESPONSE_TOOL_CALLS])
    if semconv.AI_PROMPT_TOOLS in attrs:
        view.tools = tool_names(attrs[semconv.AI_PROMPT_TOOLS])
    raw_messages = attrs.get(semconv.AI_PROMPT_MESSAGES)
    if raw_messages is not None:
        view.input = lambda: cut(input_text(raw_messages), limit)
        view.responses = ModelInput(raw_messages, _responses, _calls_since_user, options)
    return view


def _requests(raw: object) -> tuple[ToolRequest, ...]:
    calls = parse_json(raw)
    if not isinstance(calls, list):
        return ()
    out: list[ToolRequest] = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        name = as_text(call.get(semconv.AI_TOOL_NAME_KEY))
        if not name:
            continue
        arguments: Any = MISSING
        for key in (semconv.AI_TOOL_ARGS_KEY, semconv.AI_TOOL_INPUT_KEY):
            if key in call:
                arguments = call[key]
                break
        out.append(ToolRequest(name, clean_id(call.get(semconv.AI_TOOL_CALL_ID_KEY)), arguments))
    return tuple(out)


def _calls_since_user(raw: object) -> tuple[tuple[ToolRequest, Response | None], ...]:
    """`tool-call` parts after the last user message, with their `tool-result`s (see
    `SpanView.history`): AI SDK 6 answers an approval in the next generateText call."""
    messages = parse_json(raw)
    if not isinstance(messages, list):
        return ()
    start = 0
    for index, message in enumerate(messages):
        if isinstance(message, dict) and message.get(semconv.MSG_ROLE) == semconv.MSG_ROLE_USER:
            start = index + 1
    recent = messages[start:]
    responses = _responses(recent)
    out: list[tuple[ToolRequest, Response | None]] = []
    for message in recent:
        content = message.get(semconv.PART_CONTENT) if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        calls = [
            p
            for p in content
            if isinstance(p, dict) and p.get(semconv.PART_TYPE) == semconv.AI_PART_TOOL_CALL
        ]
        for request in _requests(calls):
            out.append((request, responses.get(request.call_id) if request.call_id else None))
    return tuple(out)


def _responses(raw: object) -> dict[str, Response]:
    messages = parse_json(raw)
    out: dict[str, Response] = {}
    if not isinstance(messages, list):
        return out
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get(semconv.PART_CONTENT)
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict) or part.get(semconv.PART_TYPE) != (
                semconv.AI_PART_TOOL_RESULT
            ):
                continue
            call_id = clean_id(part.get(semconv.AI_TOOL_CALL_ID_KEY))
            if call_id is None or call_id in out:
                continue
            # AI SDK 4 writes `result`; 5 writes `output` ({"type": "json", "value": ...}, or
            # {"type": "execution-denied", "reason": ...} for a denied approval).
            payload = part.get(semconv.AI_TOOL_OUTPUT_KEY, part.get(semconv.PART_RESULT))
            out[call_id] = make_response(payload)
    return out


VERCEL = Convention(
    name=NAME,
    keys=frozenset(
        {
            semconv.AI_OPERATION_ID,
            semconv.AI_TOOL_CALL_NAME,
            semconv.AI_TOOL_CALL_ID,
            semconv.AI_TOOL_CALL_ARGS,
            semconv.AI_TOOL_CALL_RESULT,
            semconv.AI_FUNCTION_ID,
            semconv.AI_RESOURCE_NAME,
            semconv.AI_PROMPT,
            semconv.AI_PROMPT_MESSAGES,
            semconv.AI_PROMPT_TOOLS,
            semconv.AI_RESPONSE_TEXT,
            semconv.AI_RESPONSE_TOOL_CALLS,
            semconv.AI_RESPONSE_MODEL,
            semconv.AI_MODEL_ID,
            semconv.AI_USAGE_PROMPT_TOKENS,
            semconv.AI_USAGE_COMPLETION_TOKENS,
            semconv.AI_USAGE_INPUT_TOKENS,
            semconv.AI_USAGE_OUTPUT_TOKENS,
            semconv.GEN_AI_USAGE_INPUT_TOKENS,
            semconv.GEN_AI_USAGE_OUTPUT_TOKENS,
        }
    ),
    prefixes=(),
    read=read,
)
