"""The steps of one run of the general builder: join requested calls to executions, order them.

Requested calls are joined to the spans that executed them (`_join`), each span becomes its
step (`_step_calls`), requests no span executed become paused or answered calls
(`_unexecuted`), and the two sequences are merged (`_step_order`).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

from tracescore.model.trajectory import AgentStep, Handoff, Step
from tracescore.trajectory._join import Request, join
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import is_output_tool
from tracescore.trajectory._step_calls import executed_step, model_call, shows_unrequested
from tracescore.trajectory._step_order import merge_steps
from tracescore.trajectory._tree import Node
from tracescore.trajectory._unexecuted import (
    answered_handoff,
    decisions_in,
    denied_earlier,
    responses_by_call,
    unexecuted_call,
)
from tracescore.trajectory._views import MISSING, LazyResponses, Response, ToolRequest

__all__ = ["RunParts", "build_steps"]


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
            handoff = answered_handoff(item.request, responses, options)
            if handoff is not None:
                requested.append((item.anchor, handoff))
                continue
            call = unexecuted_call(item.request, responses, decisions, parts.agent, options)
            anchor = item.anchor
        if options.include_output_tools or not is_output_tool(call.name, names):
            requested.append((anchor, call))
    if parts.models:
        first = parts.models[0]
        executed = (node.view.call_id for node in unmatched if node.view is not None)
        first_responses = first.view.responses if first.view is not None else None
        denied = denied_earlier(
            first_responses, first.span.start_ns, seen_ids, executed, parts.agent, options
        )
        requested[:0] = denied
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
    return merge_steps(requested, [key[0] for key, _ in others], list(map(_SECOND, others)))


_FIRST = itemgetter(0)
_SECOND = itemgetter(1)


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


def _responses(parts: RunParts) -> dict[str, Response]:
    sources = [m.view.responses for m in parts.models if m.view is not None]
    sources.append(parts.fallback_responses)
    return responses_by_call(sources)


def _decisions(parts: RunParts, options: BuildOptions) -> dict[str, str]:
    spans = [parts.run_node.span]
    spans.extend(node.span for node in parts.models)
    spans.extend(node.span for node in parts.tools)
    return decisions_in(spans, options)
