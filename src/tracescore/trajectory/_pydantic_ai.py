"""pydantic-ai: current GenAI spans plus its extras, and the legacy (v2 / Logfire) spans.

Current (instrumentation version >= 3, default 5): GenAI spans, plus deferrals
(`pydantic_ai.tool.deferral.name`: paused, although before v5 the status is also ERROR),
validation failures (`pydantic_ai.tool.failure_stage`), `final_result` and
`pydantic_ai.all_messages` on the agent span, and the output tool (`final_result`), which
returns the answer and is not a function tool. Legacy: `running tool` spans with
`tool_arguments` / `tool_response` under an `agent run` span with `agent_name`.
Source: conventions.md §5.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory._common import error_info
from tracescore.trajectory._genai import NAME as GENAI_NAME
from tracescore.trajectory._genai import cut, read_agent, read_model
from tracescore.trajectory._genai_tool import read_tool
from tracescore.trajectory._messages import (
    first_user_text,
    last_assistant_text,
    parse_messages,
    tool_requests,
    tool_responses,
)
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import as_int, as_text, clean_id, parse_json, parse_lenient
from tracescore.trajectory._views import Convention, SpanView

__all__ = ["MARKERS", "PYDANTIC_AI", "is_output_tool", "output_tool_prefixes"]

NAME = "pydantic_ai"

_MARKERS = frozenset(
    {
        semconv.PYDANTIC_AI_ALL_MESSAGES,
        semconv.PYDANTIC_AI_DEFERRAL_NAME,
        semconv.PYDANTIC_AI_FAILURE_STAGE,
        semconv.PYDANTIC_AI_TOOL_ARGUMENTS,
        semconv.PYDANTIC_AI_AGENT_NAME,
        semconv.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS,
    }
)
_RUNNING_TOOL_MSG = semconv.PYDANTIC_AI_SPAN_RUNNING_TOOL + ":"
MARKERS = _MARKERS
"""Keys that mark a span as written by pydantic-ai (with its scope name)."""


def is_output_tool(name: str | None, names: tuple[str, ...]) -> bool:
    """True for an output tool: `final_result`, or `final_result_<Type>` with several outputs."""
    if not name:
        return False
    return name in names or name.startswith(_suffixed(names))


@functools.lru_cache(maxsize=64)  # bounded: span attributes add names
def _suffixed(names: tuple[str, ...]) -> tuple[str, ...]:
    # Asked once per tool call with the same few name tuples: built once per tuple.
    return tuple(n + "_" for n in names)


def output_tool_prefixes(names: tuple[str, ...]) -> tuple[str, ...]:
    """The prefixes of `names`' suffixed variants: `is_output_tool(name, names)` is
    `bool(name) and (name in names or name.startswith(output_tool_prefixes(names)))`."""
    return _suffixed(names)


def _is_pydantic_ai(span: SpanRecord) -> bool:
    if span.scope == semconv.PYDANTIC_AI_SCOPE:
        return True
    return not span.attributes.keys().isdisjoint(_MARKERS)


def read(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """A pydantic-ai view of `span`, or None when pydantic-ai did not write it."""
    if not _is_pydantic_ai(span):
        return None
    op = as_text(span.attributes.get(semconv.GEN_AI_OPERATION_NAME))
    if op == semconv.OP_EXECUTE_TOOL:
        return _current_tool(span, options)
    if op == semconv.OP_INVOKE_AGENT:
        return _agent(read_agent(span, options, NAME), span, options)
    if op in semconv.MODEL_OPERATIONS:
        return _model(span, options)
    if op is not None:
        return SpanView("other", NAME)
    return _legacy(span, options)


def _current_tool(span: SpanRecord, options: BuildOptions) -> SpanView:
    view = read_tool(span, options, NAME)
    attrs = span.attributes
    deferral = as_text(attrs.get(semconv.PYDANTIC_AI_DEFERRAL_NAME))
    if deferral:
        reason = options.pause.deferrals.get(deferral, options.pause.other_deferral_reason)
        if reason is not None:
            # Before v5 a deferral is also status ERROR: it is control flow, not a failure.
            view.pause_reason = reason
            view.error = False
            view.error_type = None
            view.error_message = None
    stage = as_text(attrs.get(semconv.PYDANTIC_AI_FAILURE_STAGE))
    if stage == semconv.PYDANTIC_AI_FAILURE_VALIDATION and view.pause_reason is None:
        view.error = True
        view.error_type = view.error_type or semconv.PYDANTIC_AI_FAILURE_VALIDATION
    view.output_tool = is_output_tool(view.tool_name, options.output_tool_names)
    return view


def _agent(view: SpanView, span: SpanRecord, options: BuildOptions) -> SpanView:
    attrs = span.attributes
    limit = options.max_value_chars
    view.agent_name = (
        as_text(attrs.get(semconv.GEN_AI_AGENT_NAME))
        or as_text(attrs.get(semconv.PYDANTIC_AI_AGENT_NAME))
        or view.agent_name
    )
    messages = _new_messages(
        parse_messages(attrs.get(semconv.PYDANTIC_AI_ALL_MESSAGES)),
        as_int(attrs.get(semconv.PYDANTIC_AI_NEW_MESSAGE_INDEX)),
    )
    if messages:
        view.input = view.input or cut(first_user_text(messages), limit)
        view.requests = tool_requests(messages)
        view.responses = lambda: tool_responses(messages)
        view.output = view.output or cut(last_assistant_text(messages), limit)
    if semconv.PYDANTIC_AI_FINAL_RESULT in attrs:
        final = parse_lenient(attrs[semconv.PYDANTIC_AI_FINAL_RESULT], limit)
        view.output = final if isinstance(final, str) else _json_text(final, limit)
    return view


def _new_messages(messages: list[dict[str, Any]], index: int | None) -> list[dict[str, Any]]:
    """The messages of this run, without the history it was given (`message_history`).

    `pydantic_ai.new_message_index` counts pydantic-ai's own messages; the GenAI rendering
    splits system prompts into extra `system` messages, so those are not counted.
    """
    if not index or index <= 0:
        return messages
    ordinal = 0
    for position, message in enumerate(messages):
        if message.get(semconv.MSG_ROLE) == semconv.MSG_ROLE_SYSTEM:
            continue
        if ordinal == index:
            return messages[position:]
        ordinal += 1
    return []


def _json_text(value: object, limit: int) -> str:
    return cut(json.dumps(value, ensure_ascii=False, sort_keys=True), limit) or ""


def _model(span: SpanRecord, options: BuildOptions) -> SpanView:
    view = read_model(span, options, NAME)
    params = parse_json(span.attributes.get(semconv.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS))
    if isinstance(params, dict):
        output_tools = _names(params.get(semconv.PYDANTIC_AI_OUTPUT_TOOLS))
        if output_tools is not None:
            view.output_tool_names = output_tools
        if view.tools is None:
            view.tools = _names(params.get(semconv.PYDANTIC_AI_FUNCTION_TOOLS))
    return view


def _names(tools: object) -> tuple[str, ...] | None:
    if not isinstance(tools, list):
        return None
    return tuple(
        name
        for t in tools
        if isinstance(t, dict) and (name := as_text(t.get(semconv.TOOL_DEF_NAME)))
    )


def _legacy(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    attrs = span.attributes
    name = span.name
    msg = as_text(attrs.get(semconv.LOGFIRE_MSG)) or ""
    limit = options.max_value_chars
    is_output = name == semconv.PYDANTIC_AI_SPAN_OUTPUT_FUNCTION
    if (
        is_output
        or name == semconv.PYDANTIC_AI_SPAN_RUNNING_TOOL
        or name.startswith(_RUNNING_TOOL_MSG)
        or msg.startswith(_RUNNING_TOOL_MSG)
    ):
        failed, error_type, message = error_info(span)
        tool_name = as_text(attrs.get(semconv.GEN_AI_TOOL_NAME))
        if not tool_name and ":" in (msg or name):
            tool_name = (msg or name).split(":", 1)[1].strip() or None
        view = SpanView(
            "tool",
            NAME,
            tool_name=tool_name,
            call_id=clean_id(attrs.get(semconv.GEN_AI_TOOL_CALL_ID)),
            error=failed,
            error_type=error_type,
            error_message=message,
            output_tool=is_output or is_output_tool(tool_name, options.output_tool_names),
        )
        if semconv.PYDANTIC_AI_TOOL_ARGUMENTS in attrs:
            view.arguments = parse_lenient(attrs[semconv.PYDANTIC_AI_TOOL_ARGUMENTS], limit)
        if semconv.PYDANTIC_AI_TOOL_RESPONSE in attrs:
            view.result = parse_lenient(attrs[semconv.PYDANTIC_AI_TOOL_RESPONSE], limit)
        return view
    if semconv.PYDANTIC_AI_AGENT_NAME in attrs and (
        semconv.PYDANTIC_AI_ALL_MESSAGES in attrs
        or semconv.PYDANTIC_AI_FINAL_RESULT in attrs
        or name == semconv.PYDANTIC_AI_SPAN_AGENT_RUN
        or name.endswith(" run")
    ):
        return _agent(SpanView("agent", NAME), span, options)
    return None


PYDANTIC_AI = Convention(
    name=NAME,
    keys=frozenset(
        {
            *_MARKERS,
            semconv.PYDANTIC_AI_FINAL_RESULT,
            semconv.PYDANTIC_AI_TOOL_RESPONSE,
            semconv.PYDANTIC_AI_NEW_MESSAGE_INDEX,
            semconv.LOGFIRE_MSG,
        }
    ),
    prefixes=(),
    read=read,
    extends=(GENAI_NAME,),
)
