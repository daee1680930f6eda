"""The step of one span: a model call, or a tool call or handoff completed by its request.

Both builders make every step of a span here (the general one in `_steps`, the flat-run fast
path in `_flat`, which makes its model calls as `model_call` does, inlined), so a step reads
the same whichever path built it.
"""

from __future__ import annotations

from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Deferred, Handoff, ModelCall, ToolCall, ToolStatus
from tracescore.trajectory._messages import lenient
from tracescore.trajectory._openai_agents import awaits_approval
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import is_output_tool
from tracescore.trajectory._values import clean_text, parse_lenient
from tracescore.trajectory._views import (
    MISSING,
    RequestValues,
    SpanView,
    ToolRequest,
    ToolValues,
    tool_values,
)

__all__ = [
    "executed_call",
    "executed_step",
    "model_call",
    "paused_for_approval",
    "shows_unrequested",
]


def model_call(view: SpanView, span: SpanRecord, span_id: str) -> ModelCall:
    """The step of one model span."""
    # Positional, in field order: model, input and output tokens, start, end, span id.
    return ModelCall(
        view.model,
        view.input_tokens,
        view.output_tokens,
        span.start_ns or None,
        span.end_ns or None,
        span_id,
    )


def executed_step(
    view: SpanView,
    span: SpanRecord,
    span_id: str,
    request: ToolRequest | None,
    agent: str | None,
    options: BuildOptions,
    last_model_start: int,
) -> ToolCall | Handoff:
    """The step of one tool or handoff span, completed by the request it answered (if any).

    An OpenAI Agents tool span that stopped its run for an approval (`awaits_approval`) is a
    paused call (`approval_required`), not the clean execution its status says.
    """
    if view.role == "handoff":
        arguments = view.arguments
        if arguments is MISSING:
            arguments = lenient(request.arguments, options.max_value_chars) if request else None
        return Handoff(
            view.agent_name or clean_text(span.name),
            view.call_id or (request.call_id if request else None),
            (request.name if request else None) or view.tool_name,
            arguments if arguments not in (MISSING, {}) else None,
            span.start_ns or None,
            span.end_ns or None,
            span_id,
        )
    values = paused_for_approval(tool_values(view), span, options, last_model_start)
    asked = (request.name, request.call_id, request.arguments) if request is not None else None
    return executed_call(values, span, span_id, asked, agent, options)


def paused_for_approval(
    values: ToolValues, span: SpanRecord, options: BuildOptions, last_model_start: int
) -> ToolValues:
    """A tool span's `values`, with its pause reason when it stopped its run for an approval."""
    reason = options.pause.awaiting_approval
    _, _, error, _, _, _, result, pause_reason = values
    if reason is not None and awaits_approval(
        span, error, pause_reason, result, span.start_ns >= last_model_start
    ):
        return (*values[:7], reason)
    return values


def executed_call(
    values: ToolValues,
    span: SpanRecord,
    span_id: str,
    request: RequestValues | None,
    agent: str | None,
    options: BuildOptions,
) -> ToolCall:
    """The step of one tool span (what it says of its call: `values`), completed by the request
    it answered (if any: its tool name, call id and arguments)."""
    tool_name, call_id, error, error_type, error_message, arguments, result, pause_reason = values
    # Only a failed call keeps its error type and message.
    status: ToolStatus
    if pause_reason is not None:
        status = "paused"
        error_type = error_message = None
    elif error:
        status = "error"
    else:
        status = "ok"
        error_type = error_message = None
    if arguments is MISSING and request is not None:
        # The requested call's arguments stand in (the service leaves a span's undecoded when
        # no scorer reads them), parsed when first read: most scorers never read them.
        arguments = request[2]
        if arguments is not MISSING:
            arguments = Deferred(parse_lenient, arguments, options.max_value_chars)
    name = tool_name or (request[0] if request else None) or clean_text(span.name)
    # Positional, in field order (one is built per tool call).
    return ToolCall(
        name,
        call_id or (request[1] if request else None),
        None if arguments is MISSING else arguments,
        None if result is MISSING else result,
        status,
        error_type,
        error_message,
        pause_reason,
        span.start_ns or None,
        span.end_ns or None,
        span_id,
        agent,
    )


def shows_unrequested(
    view: SpanView, call: ToolCall, output_tools: tuple[str, ...], options: BuildOptions
) -> bool:
    """Whether an execution no request asked for is a step: output tools are left out unless
    `include_output_tools`."""
    return options.include_output_tools or not (
        view.output_tool or is_output_tool(call.name, output_tools)
    )
