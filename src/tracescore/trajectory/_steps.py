"""The steps of one run: join requested calls to executions, decide statuses, order them.

Tool calls follow the order the model requested them (tool_call parts across the run's model
spans), so a paused call keeps its place between its neighbours. Executions with no recorded
request, model calls and sub-agent runs follow start time, then end time, then span id. The two
sequences are merged like merge sort, so neither loses its own order.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import AgentStep, Handoff, ModelCall, Step, ToolCall, ToolStatus
from tracescore.trajectory._join import Request, join
from tracescore.trajectory._messages import lenient
from tracescore.trajectory._openai_agents import awaits_approval
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import is_output_tool
from tracescore.trajectory._tree import Node
from tracescore.trajectory._values import as_text, clean_id, clean_text, parse_json
from tracescore.trajectory._views import (
    MISSING,
    LazyResponses,
    ModelInput,
    Response,
    SpanView,
    ToolRequest,
)

__all__ = [
    "RunParts",
    "build_steps",
    "executed_call",
    "executed_step",
    "model_call",
    "shows_unrequested",
]


@dataclass(slots=True)
class RunParts:
    """The members of one run, already sorted by (start, end, span id)."""

    agent: str | None
    run_node: Node
    models: list[Node]
    tools: list[Node]
    subagents: list[tuple[Node, AgentStep]]
    fallback_requests: tuple[ToolRequest, ...]
    fallback_responses: LazyResponses | None


def build_steps(parts: RunParts, options: BuildOptions) -> tuple[Step, ...]:
    """The ordered steps of one run."""
    output_tools = set(options.output_tool_names)
    requests: list[Request] = []
    seen_ids: set[str] = set()
    recorded = False
    model_steps: list[tuple[tuple[int, int, str], Step]] = []
    for model in parts.models:
        view = model.view
        assert view is not None
        span = model.span
        model_steps.append((model.key, model_call(view, span, model.span_id)))
        if view.output_tool_names:
            output_tools.update(view.output_tool_names)
        if view.requests is None:
            continue
        recorded = True
        anchor = span.end_ns or span.start_ns
        for request in view.requests:
            if request.call_id is not None:
                if request.call_id in seen_ids:
                    continue  # the same call recorded twice (e.g. a retried stream)
                seen_ids.add(request.call_id)
            requests.append(Request(request, anchor))
    # The agent span's own record of the exchange is a fallback for runs whose model spans
    # recorded no output messages at all (content capture off on chat spans, or no chat spans).
    if not recorded and parts.fallback_requests:
        anchor = parts.run_node.span.start_ns
        for request in parts.fallback_requests:
            if request.call_id is not None:
                if request.call_id in seen_ids:
                    continue
                seen_ids.add(request.call_id)
            requests.append(Request(request, anchor))
    names = tuple(sorted(output_tools))
    unmatched = join(requests, _executions(parts.tools))
    requested: list[tuple[int, Step]] = []
    responses: dict[str, Response] | None = None
    decisions: dict[str, str] | None = None
    last_model = max((m.span.start_ns for m in parts.models), default=0)
    for item in requests:
        if item.execution is not None:
            execution = item.execution
            assert execution.view is not None
            step = executed_step(
                execution.view,
                execution.span,
                execution.span_id,
                item.request,
                parts.agent,
                options,
                last_model,
            )
            if isinstance(step, Handoff):
                requested.append((execution.span.start_ns, step))
                continue
            call = step
            anchor = item.execution.span.start_ns
        else:
            if responses is None:
                responses = _responses(parts)
                decisions = _decisions(parts, options)
            assert decisions is not None
            handoff = _answered_handoff(item.request, responses, options)
            if handoff is not None:
                requested.append((item.anchor, handoff))
                continue
            call = _unexecuted(item.request, responses, decisions, parts.agent, options)
            anchor = item.anchor
        if options.include_output_tools or not is_output_tool(call.name, names):
            requested.append((anchor, call))
    requested[:0] = _denied_earlier(parts, seen_ids, unmatched, options)
    others: list[tuple[tuple[int, int, str], Step]] = []
    for node in unmatched:
        view = node.view
        assert view is not None
        step = executed_step(view, node.span, node.span_id, None, parts.agent, options, last_model)
        if isinstance(step, Handoff) or shows_unrequested(view, step, names, options):
            others.append((node.key, step))
    others += model_steps
    others.extend((node.key, step) for node, step in parts.subagents)
    others.sort(key=_FIRST)
    return _merge(requested, others)


_FIRST = itemgetter(0)


def _executions(tools: list[Node]) -> list[Node]:
    """Tool nodes minus inner spans of the same call (e.g. an MCP span inside a tool span)."""
    kept: list[Node] = []
    for node in tools:
        view = node.view
        assert view is not None
        outer = node.tool_ancestor
        if (
            outer is not None
            and outer.view is not None
            and (
                (view.call_id is not None and view.call_id == outer.view.call_id)
                or view.tool_name == outer.view.tool_name
            )
        ):
            _fill(outer, node)
            continue
        kept.append(node)
    return kept


def _fill(outer: Node, inner: Node) -> None:
    a, b = outer.view, inner.view
    assert a is not None
    assert b is not None
    if a.arguments is MISSING:
        a.arguments = b.arguments
    if a.result is MISSING:
        a.result = b.result
    if b.error and not a.error:
        a.error, a.error_type, a.error_message = True, b.error_type, b.error_message


def model_call(view: SpanView, span: SpanRecord, span_id: str) -> ModelCall:
    """The step of one model span (the flat-run builder makes them here too)."""
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
    reason = options.pause.awaiting_approval
    if reason is not None and awaits_approval(view, span, span.start_ns >= last_model_start):
        view.pause_reason = reason
    return executed_call(view, span, span_id, request, agent, options)


def executed_call(
    view: SpanView,
    span: SpanRecord,
    span_id: str,
    request: ToolRequest | None,
    agent: str | None,
    options: BuildOptions,
) -> ToolCall:
    """The step of one tool span, completed by the request it answered (if any)."""
    status: ToolStatus = "ok"
    if view.pause_reason is not None:
        status = "paused"
    elif view.error:
        status = "error"
    arguments = view.arguments
    if arguments is MISSING:
        arguments = lenient(request.arguments, options.max_value_chars) if request else None
    name = view.tool_name or (request.name if request else None) or clean_text(span.name)
    failed = status == "error"
    # Positional, in field order (one is built per tool call).
    return ToolCall(
        name,
        view.call_id or (request.call_id if request else None),
        None if arguments is MISSING else arguments,
        None if view.result is MISSING else view.result,
        status,
        view.error_type if failed else None,
        view.error_message if failed else None,
        view.pause_reason,
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


def _answered_handoff(
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


def _unexecuted(
    request: ToolRequest,
    responses: dict[str, Response],
    decisions: dict[str, str],
    agent: str | None,
    options: BuildOptions,
) -> ToolCall:
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


def _denied_earlier(
    parts: RunParts, seen_ids: set[str], unmatched: list[Node], options: BuildOptions
) -> list[tuple[int, Step]]:
    """Calls of an earlier run that the user denied, as told to this (resumed) run's first model
    call, each a paused call (`denied`) placed before that model call.

    The OpenAI Agents SDK and AI SDK 6 stop a run for an approval, and the answer goes to the
    model in the next run (a trace of its own): a rejected call has no execution anywhere, and
    its only record is the denial in the resumed run's input. A call this run requested or
    executed itself is not one.
    """
    if not parts.models:
        return []
    first = parts.models[0]
    source = first.view.responses if first.view is not None else None
    if not isinstance(source, ModelInput):
        return []
    executed = {n.view.call_id for n in unmatched if n.view is not None and n.view.call_id}
    anchor = (first.span.start_ns or 1) - 1  # before the model call that was told
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
                    agent=parts.agent,
                ),
            )
        )
    return out


def _responses(parts: RunParts) -> dict[str, Response]:
    out: dict[str, Response] = {}
    sources: list[Any] = [m.view.responses for m in parts.models if m.view is not None]
    sources.append(parts.fallback_responses)
    for lazy in sources:
        if lazy is None:
            continue
        for call_id, response in lazy().items():
            out.setdefault(call_id, response)
    return out


def _decisions(parts: RunParts, options: BuildOptions) -> dict[str, str]:
    """Pause reasons from `gen_ai.tool.call.decision` events, by call id or `name:<tool>`."""
    out: dict[str, str] = {}
    nodes: Iterable[Node] = [parts.run_node, *parts.models, *parts.tools]
    for node in nodes:
        for event in node.span.events:
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


def _merge(
    requested: Sequence[tuple[int, Step]], others: Sequence[tuple[tuple[int, int, str], Step]]
) -> tuple[Step, ...]:
    """Merge sort's merge: each sequence keeps its order; on a tie a requested call goes after
    model calls (a call never precedes the model call that requested it; clocks of millisecond
    resolution, as in JavaScript SDKs, start both in the same millisecond) and before the rest
    (a tool that wraps a sub-agent starts with it).

    Others come sorted by start, so before each requested call go all remaining others that
    start earlier: found by bisection, and copied in C rather than one comparison at a time.
    """
    if not requested:
        return tuple(map(_SECOND, others))
    starts = [key[0] for key, _ in others]
    out: list[Step] = []
    j = 0
    n = len(others)
    for anchor, call in requested:
        k = bisect_left(starts, anchor, j)
        while k < n and starts[k] == anchor and others[k][1].__class__ is ModelCall:
            k += 1
        if k > j:
            out.extend(map(_SECOND, others[j:k]))
            j = k
        out.append(call)
    out.extend(map(_SECOND, others[j:]))
    return tuple(out)


_SECOND = itemgetter(1)
