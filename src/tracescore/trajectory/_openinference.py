"""OpenInference: `openinference.span.kind` TOOL / AGENT / LLM / CHAIN and flattened messages.

Tool spans carry `tool.name`, `input.value` (arguments JSON) and `output.value`. Agno's tool
spans are named after the bare function, have no call id and put the error text in
`output.value` (status ERROR), so they join requests by name and order. LLM spans flatten
messages as `llm.output_messages.<i>.message.tool_calls.<k>.tool_call.{id,function.*}` and tool
results as `llm.input_messages.<i>.message.{role=tool,tool_call_id,content}`.
Source: conventions.md §2 and the §8 table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracescore import semconv
from tracescore.model.span import AttrValue, SpanRecord
from tracescore.trajectory._common import error_info
from tracescore.trajectory._common import indexed as _indexed
from tracescore.trajectory._genai import cut
from tracescore.trajectory._messages import (
    input_text,
    make_response,
    output_text,
    response_flags,
    tool_names,
)
from tracescore.trajectory._openai_agents import handoff_tool_name
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import (
    as_int,
    as_text,
    clean_id,
    clean_text,
    parse_json,
    parse_lenient,
)
from tracescore.trajectory._views import MISSING, Convention, Response, SpanView, ToolRequest

__all__ = ["OPENINFERENCE"]

NAME = "openinference"

_TOOL_CALLS = semconv.OI_MSG_TOOL_CALLS + "."
_CONTENTS_PREFIX = "message.contents."


def read(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """An OpenInference view of `span`, or None without `openinference.span.kind`."""
    kind = as_text(span.attributes.get(semconv.OI_SPAN_KIND))
    if kind is None:
        return None
    kind = kind.strip().upper()
    if kind == semconv.OI_KIND_TOOL:
        return _tool(span, options)
    if kind == semconv.OI_KIND_AGENT:
        return _agent(span, options)
    if kind == semconv.OI_KIND_LLM:
        return _model(span, options)
    view = SpanView("other", NAME)
    if kind not in semconv.OI_KINDS:
        view.warnings += (f"spans with an unknown {semconv.OI_SPAN_KIND}",)
    if kind == semconv.OI_KIND_CHAIN:
        # A CHAIN root (e.g. a workflow) holds the run's input and output when no agent does.
        limit = options.max_value_chars
        view.input = cut(input_text(span.attributes.get(semconv.OI_INPUT_VALUE)), limit)
        view.output = cut(output_text(span.attributes.get(semconv.OI_OUTPUT_VALUE)), limit)
    return view


def _tool(span: SpanRecord, options: BuildOptions) -> SpanView:
    attrs = span.attributes
    limit = options.max_value_chars
    failed, error_type, message = error_info(span)
    name = as_text(attrs.get(semconv.OI_TOOL_NAME))
    if not name and span.name.startswith(semconv.OI_HANDOFF_SPAN_PREFIX):
        # openai-agents: input.value is the agent handing off, output.value the new agent.
        target = clean_text(span.name[len(semconv.OI_HANDOFF_SPAN_PREFIX) :].strip())
        if target:
            return SpanView("handoff", NAME, handoff_tool_name(target), agent_name=target)
    if name in _AGNO_DELEGATIONS and span.scope == semconv.AGNO_SCOPE:
        return _agno_delegation(span, name, options)
    view = SpanView(
        "tool",
        NAME,
        tool_name=name or span.name or None,
        call_id=clean_id(attrs.get(semconv.OI_TOOL_ID)),
        error=failed,
        error_type=error_type,
        error_message=message,
    )
    if semconv.OI_INPUT_VALUE in attrs:
        view.arguments = parse_lenient(attrs[semconv.OI_INPUT_VALUE], limit)
    elif semconv.OI_TOOL_PARAMETERS in attrs:
        view.arguments = parse_lenient(attrs[semconv.OI_TOOL_PARAMETERS], limit)
    if semconv.OI_OUTPUT_VALUE in attrs:
        raw = attrs[semconv.OI_OUTPUT_VALUE]
        view.result = parse_lenient(raw, limit)
        if failed and not message:
            # agno: the error text is the output.
            view.error_message = cut(as_text(raw), limit)
        if response_flags(view.result)[1] and not failed:
            view.error, view.error_type = True, semconv.MCP_TOOL_ERROR
    return view


_AGNO_DELEGATIONS = frozenset({semconv.AGNO_DELEGATE_TO_MEMBER, semconv.AGNO_DELEGATE_TO_MEMBERS})


def _agno_delegation(span: SpanRecord, name: str, options: BuildOptions) -> SpanView:
    """An Agno team delegating to a member (or to all of them): a handoff to that member.

    The member's run is its own agent span under the team's; a delegation that failed (no such
    member) stays a failed tool call, as nothing was handed over.
    """
    failed, error_type, message = error_info(span)
    arguments = parse_lenient(span.attributes.get(semconv.OI_INPUT_VALUE), options.max_value_chars)
    target = as_text(arguments.get(semconv.AGNO_MEMBER_ID)) if isinstance(arguments, dict) else None
    if name == semconv.AGNO_DELEGATE_TO_MEMBERS:
        target = semconv.HANDOFF_ALL_MEMBERS
    if failed or not target:
        view = SpanView("tool", NAME, name, None, failed, error_type, message)
        view.arguments = arguments
        if semconv.OI_OUTPUT_VALUE in span.attributes:
            view.result = parse_lenient(
                span.attributes[semconv.OI_OUTPUT_VALUE], options.max_value_chars
            )
        return view
    view = SpanView("handoff", NAME, name, agent_name=target)
    view.arguments = arguments
    return view


def _agent(span: SpanRecord, options: BuildOptions) -> SpanView:
    attrs = span.attributes
    limit = options.max_value_chars
    view = SpanView(
        "agent",
        NAME,
        agent_name=as_text(attrs.get(semconv.OI_AGENT_NAME))
        or as_text(attrs.get(semconv.OI_GRAPH_NODE_NAME))
        or span.name
        or None,
        input=cut(input_text(attrs.get(semconv.OI_INPUT_VALUE)), limit),
        output=cut(output_text(attrs.get(semconv.OI_OUTPUT_VALUE)), limit),
    )
    if semconv.AGNO_TOOLS in attrs:
        view.tools = tool_names(attrs[semconv.AGNO_TOOLS])
    return view


def _model(span: SpanRecord, options: BuildOptions) -> SpanView:
    attrs = span.attributes
    limit = options.max_value_chars
    outputs = _indexed(attrs, semconv.OI_LLM_OUTPUT_MESSAGES)
    requests: list[ToolRequest] = []
    for message in outputs:
        requests.extend(_message_requests(message))
    if any(r.arguments is MISSING for r in requests):
        requests = _fill_arguments(requests, attrs.get(semconv.OI_OUTPUT_VALUE))
    answer = None
    for message in reversed(outputs):
        answer = _message_text(message)
        if answer:
            break
    view = SpanView(
        "model",
        NAME,
        model=as_text(attrs.get(semconv.OI_LLM_MODEL_NAME)),
        input_tokens=as_int(attrs.get(semconv.OI_LLM_PROMPT_TOKENS)),
        output_tokens=as_int(attrs.get(semconv.OI_LLM_COMPLETION_TOKENS)),
        requests=tuple(requests) if outputs else None,
        output=cut(answer, limit),
    )
    tool_schemas = [
        m.get(semconv.OI_TOOL_JSON_SCHEMA) for m in _indexed(attrs, semconv.OI_LLM_TOOLS)
    ]
    if tool_schemas:
        view.tools = tool_names(tuple(s for s in tool_schemas if isinstance(s, str)))
    view.input = lambda: cut(_first_user(attrs), limit)
    view.responses = lambda: _responses(attrs)
    return view


def _message_requests(message: dict[str, AttrValue]) -> list[ToolRequest]:
    calls: dict[int, dict[str, AttrValue]] = {}
    for key, value in message.items():
        if not key.startswith(_TOOL_CALLS):
            continue
        index, _, rest = key[len(_TOOL_CALLS) :].partition(".")
        if index.isdigit():
            calls.setdefault(int(index), {})[rest] = value
    out: list[ToolRequest] = []
    for position in sorted(calls):
        call = calls[position]
        name = as_text(call.get(semconv.OI_TOOL_CALL_FUNCTION_NAME))
        if not name:
            continue
        arguments: Any = call.get(semconv.OI_TOOL_CALL_FUNCTION_ARGUMENTS, MISSING)
        out.append(ToolRequest(name, clean_id(call.get(semconv.OI_TOOL_CALL_ID)), arguments))
    return out


def _fill_arguments(requests: list[ToolRequest], raw_output: object) -> list[ToolRequest]:
    """Arguments the flattening left out (an empty `"{}"`), from the raw OpenAI-style output."""
    found: dict[str, Any] = {}
    messages = parse_json(raw_output)
    for message in messages if isinstance(messages, list) else []:
        calls = message.get(semconv.OI_RAW_TOOL_CALLS) if isinstance(message, dict) else None
        for raw in calls if isinstance(calls, list) else []:
            if not isinstance(raw, dict):
                continue
            function = raw.get(semconv.TOOL_DEF_FUNCTION)
            call_id = clean_id(raw.get(semconv.PART_ID))
            if call_id and isinstance(function, dict) and semconv.PART_ARGUMENTS in function:
                found[call_id] = function[semconv.PART_ARGUMENTS]
    return [
        ToolRequest(r.name, r.call_id, found[r.call_id])
        if r.arguments is MISSING and r.call_id in found
        else r
        for r in requests
    ]


def _message_text(message: dict[str, AttrValue]) -> str | None:
    text = as_text(message.get(semconv.OI_MSG_CONTENT))
    if text:
        return text
    parts = sorted(
        (k, v)
        for k, v in message.items()
        if k.startswith(_CONTENTS_PREFIX) and k.endswith(semconv.OI_MSG_CONTENTS_TEXT)
    )
    texts = [t for _, v in parts if (t := as_text(v))]
    return "\n".join(texts) if texts else None


def _first_user(attrs: Mapping[str, AttrValue]) -> str | None:
    for message in _indexed(attrs, semconv.OI_LLM_INPUT_MESSAGES):
        if as_text(message.get(semconv.OI_MSG_ROLE)) == semconv.MSG_ROLE_USER:
            text = _message_text(message)
            if text:
                return text
    return None


def _responses(attrs: Mapping[str, AttrValue]) -> dict[str, Response]:
    out: dict[str, Response] = {}
    for message in _indexed(attrs, semconv.OI_LLM_INPUT_MESSAGES):
        call_id = clean_id(message.get(semconv.OI_MSG_TOOL_CALL_ID))
        if call_id and call_id not in out:
            out[call_id] = make_response(message.get(semconv.OI_MSG_CONTENT))
    return out


OPENINFERENCE = Convention(
    name=NAME,
    keys=frozenset(
        {
            semconv.OI_SPAN_KIND,
            semconv.OI_TOOL_NAME,
            semconv.OI_TOOL_ID,
            semconv.OI_TOOL_PARAMETERS,
            semconv.OI_INPUT_VALUE,
            semconv.OI_OUTPUT_VALUE,
            semconv.OI_AGENT_NAME,
            semconv.OI_GRAPH_NODE_NAME,
            semconv.OI_LLM_MODEL_NAME,
            semconv.OI_LLM_PROMPT_TOKENS,
            semconv.OI_LLM_COMPLETION_TOKENS,
            semconv.AGNO_TOOLS,
            semconv.ERROR_MESSAGE,
        }
    ),
    prefixes=(
        semconv.OI_LLM_INPUT_MESSAGES,
        semconv.OI_LLM_OUTPUT_MESSAGES,
        semconv.OI_LLM_TOOLS,
    ),
    read=read,
)
