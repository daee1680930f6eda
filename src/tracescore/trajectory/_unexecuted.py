"""Requested calls no span executed: paused, denied, failed by their response, or a handoff.

What such a call became is told by the rest of the run: a response in a later model call's
input (a denial, an MCP error, a Microsoft Agent Framework handoff answered by middleware), a
`gen_ai.tool.call.decision` event, or nothing at all (`no_execution`). A resumed run also shows
the calls of an earlier run that the user denied (`denied_earlier`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Handoff, Step, ToolCall, ToolStatus
from tracescore.trajectory._messages import lenient
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import as_text, clean_id, parse_json
from tracescore.trajectory._views import (
    MISSING,
    LazyResponses,
    ModelInput,
    Response,
    ToolRequest,
)

__all__ = [
    "answered_handoff",
    "decisions_in",
    "denied_earlier",
    "responses_by_call",
    "unexecuted_call",
]


def answered_handoff(
    request: ToolRequest, responses: dict[str, Response], options: BuildOptions
) -> Handoff | None:
    """A Microsoft Agent Framework handoff: a `handoff_to_<agent>` call answered with
    `{"handoff_to": "<agent>"}` (the framework's middleware answers it; no tool span runs)."""
    if not request.name.startswith(semconv.MAF_HANDOFF_TOOL_PREFIX) or request.call_id is None:
        return None
    response = responses.get(request.call_id)
    if response is None:
        return None
    answer = parse_json(response.result)
    target = answer.get(semconv.MAF_HANDOFF_RESULT_KEY) if isinstance(answer, dict) else None
    if not isinstance(target, str) or not target:
        return None
    arguments = lenient(request.arguments, options.max_value_chars)
    return Handoff(
        target,
        request.call_id,
        request.name,
        arguments if arguments not in (MISSING, {}) else None,
    )


def unexecuted_call(
    request: ToolRequest,
    responses: dict[str, Response],
    decisions: dict[str, str],
    agent: str | None,
    options: BuildOptions,
) -> ToolCall:
    """The step of a requested call with no execution span."""
    limit = options.max_value_chars
    arguments = lenient(request.arguments, limit)
    response = responses.get(request.call_id) if request.call_id else None
    status: ToolStatus = "ok"
    reason: str | None = None
    result: Any = None
    error_type: str | None = None
    decision = decisions.get(request.call_id or "") or decisions.get(f"name:{request.name}")
    if response is not None:
        result = lenient(response.result, limit)
    if response is not None and response.denied and options.pause.denied_responses:
        status, reason = "paused", "denied"
    elif decision is not None:
        status, reason = "paused", decision
    elif response is not None:
        if response.is_error:
            status, error_type = "error", semconv.MCP_TOOL_ERROR
    elif options.pause.unexecuted_request:
        status, reason = "paused", "no_execution"
    return ToolCall(
        name=request.name,
        call_id=request.call_id,
        arguments=None if arguments is MISSING else arguments,
        result=result,
        status=status,
        error_type=error_type,
        pause_reason=reason,
        agent=agent,
    )


def denied_earlier(
    first_responses: LazyResponses | None,
    first_model_start: int,
    seen_ids: set[str] | dict[str, Any],
    executed_ids: Iterable[str | None],
    agent: str | None,
    options: BuildOptions,
) -> list[tuple[int, Step]]:
    """Calls of an earlier run that the user denied, as told to this (resumed) run's first model
    call (whose recorded responses are `first_responses`, started at `first_model_start`), each
    a paused call (`denied`) placed before that model call.

    The OpenAI Agents SDK and AI SDK 6 stop a run for an approval, and the answer goes to the
    model in the next run (a trace of its own): a rejected call has no execution anywhere, and
    its only record is the denial in the resumed run's input. A call this run requested
    (`seen_ids`) or executed itself (`executed_ids`: the call ids of its executions no request
    asked for) is not one.
    """
    source = first_responses
    if not isinstance(source, ModelInput):  # (None: no input recorded)
        return []
    executed = {call_id for call_id in executed_ids if call_id}
    anchor = (first_model_start or 1) - 1  # before the model call that was told
    texts = options.pause.rejection_texts
    out: list[tuple[int, Step]] = []
    for request, response in source.history():
        if response is None or request.call_id in seen_ids or request.call_id in executed:
            continue
        rejected = isinstance(response.result, str) and response.result.strip() in texts
        if not (response.denied or rejected) or not options.pause.denied_responses:
            continue
        limit = options.max_value_chars
        arguments = lenient(request.arguments, limit)
        out.append(
            (
                anchor,
                ToolCall(
                    name=request.name,
                    call_id=request.call_id,
                    arguments=None if arguments is MISSING else arguments,
                    result=lenient(response.result, limit),
                    status="paused",
                    pause_reason="denied",
                    agent=agent,
                ),
            )
        )
    return out


def responses_by_call(sources: Iterable[LazyResponses | None]) -> dict[str, Response]:
    """Every response the run's model calls (then its agent span) recorded, by call id: the
    first source to answer an id wins."""
    out: dict[str, Response] = {}
    for lazy in sources:
        if lazy is None:
            continue
        for call_id, response in lazy().items():
            out.setdefault(call_id, response)
    return out


def decisions_in(spans: Iterable[SpanRecord], options: BuildOptions) -> dict[str, str]:
    """Pause reasons from `gen_ai.tool.call.decision` events, by call id or `name:<tool>`: the
    first span's event wins (the run's span, then its model spans, then its tool spans)."""
    out: dict[str, str] = {}
    for span in spans:
        for event in span.events:
            if event.name != semconv.GEN_AI_TOOL_CALL_DECISION_EVENT:
                continue
            outcome = as_text(event.attributes.get(semconv.GEN_AI_TOOL_CALL_DECISION_OUTCOME))
            reason = options.pause.decisions.get(outcome or "")
            if reason is None:
                continue
            call_id = clean_id(event.attributes.get(semconv.GEN_AI_TOOL_CALL_ID))
            name = as_text(event.attributes.get(semconv.GEN_AI_TOOL_NAME))
            if call_id:
                out.setdefault(call_id, reason)
            elif name:
                out.setdefault(f"name:{name}", reason)
    return out
