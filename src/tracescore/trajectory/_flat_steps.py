"""The steps of a flat run (`_flat`) in a second pass: its requested calls joined to their
executions by call id.

A flat run's model spans may record the calls they asked for (`tool_call` parts of their
output messages, the shape SDKs with message capture send), and its tool spans repeat their
ids. Where the pass over the spans could not make the steps itself (`_flat_parts`), they are
made here as `_steps.build_steps` makes them, from the same step builders, but without its
nodes: requests in the order asked (each joined to the first tool span with its id, or else
paused, denied or answered as `_unexecuted` decides), merged into the model calls and the
executions nobody asked for, in (start, end, span id) order.

Requests are joined by call id only: a request or an execution without an id (joined by name
and order) is left to the general path (`flat_steps` answers None).
"""

from __future__ import annotations

from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Step
from tracescore.trajectory._flat_parts import FlatParts, denied_before_run, responses_of
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._step_calls import executed_call, paused_for_approval
from tracescore.trajectory._step_order import merge_steps
from tracescore.trajectory._unexecuted import (
    answered_handoff,
    decisions_in,
    responses_by_call,
    unexecuted_call,
)
from tracescore.trajectory._views import (
    TOOL_CALL_ID,
    Response,
    ToolRequest,
    ToolValues,
    request_values,
)

__all__ = ["flat_steps"]


def flat_steps(parts: FlatParts, options: BuildOptions) -> tuple[Step, ...] | None:
    """The steps of the flat run `parts`, or None when a call must be joined by name."""
    # The agent span's own record of the exchange stands in when no model span recorded one
    # (content capture off on chat spans), asked for when the run started.
    fallback = parts.agent_view.requests
    if (
        not parts.recorded
        and fallback
        and not parts.add_requests(request_values(fallback), parts.root.start_ns)
    ):
        return None
    requests = parts.requests
    tools = parts.tools
    executions: list[tuple[SpanRecord, ToolValues] | None] = [None] * len(requests)
    unrequested = [True] * len(tools)
    if requests:
        by_id = parts.by_id
        for index, execution in enumerate(tools):
            call_id = execution[1][TOOL_CALL_ID]
            if call_id is None:
                return None
            found = by_id.get(call_id)
            if found is not None and executions[found] is None:
                executions[found] = execution
                unrequested[index] = False
    # Model spans come in (start, end, span id) order: the last one started last.
    last_model = parts.model_spans[-1].start_ns if parts.model_spans else 0
    approval = options.pause.awaiting_approval
    requested = _requested(parts, executions, last_model, options) if requests else []
    model_spans, model_steps, agent = parts.model_spans, parts.model_steps, parts.agent
    starts: list[int]
    steps: list[Step]
    if True not in unrequested:  # every execution was requested: the others are model calls
        starts = [span.start_ns for span in model_spans]
        steps = model_steps  # (merge_steps only reads it)
    else:
        starts = []
        steps = []
        for index in parts.order:
            if index < 0:
                starts.append(model_spans[~index].start_ns)
                steps.append(model_steps[~index])
                continue
            if not unrequested[index]:
                continue
            span, values = tools[index]
            start = span.start_ns
            if approval is not None and start >= last_model:  # (its first condition)
                values = paused_for_approval(values, span, options, last_model)
            call = executed_call(values, span, span.span_id, None, agent, options)
            if parts.shows(call.name):
                starts.append(start)
                steps.append(call)
    if parts.models:
        executed = (
            values[TOOL_CALL_ID] for index, (_, values) in enumerate(tools) if unrequested[index]
        )
        requested[:0] = denied_before_run(parts, parts.models[0], model_spans[0].start_ns, executed)
    return merge_steps(requested, starts, steps)


def _requested(
    parts: FlatParts,
    executions: list[tuple[SpanRecord, ToolValues] | None],
    last_model: int,
    options: BuildOptions,
) -> list[tuple[int, Step]]:
    """The requested calls in the order asked, each with its anchor time, but the output tools
    the run does not show (`FlatParts.shows`)."""
    agent = parts.agent
    approval = options.pause.awaiting_approval
    requested: list[tuple[int, Step]] = []
    responses: dict[str, Response] | None = None
    decisions: dict[str, str] = {}
    for index, request in enumerate(parts.requests):
        execution = executions[index]
        if execution is not None:
            span, values = execution
            if approval is not None and span.start_ns >= last_model:  # (its first condition)
                values = paused_for_approval(values, span, options, last_model)
            call = executed_call(values, span, span.span_id, request, agent, options)
            anchor = span.start_ns
        else:
            if responses is None:
                sources = [responses_of(model, options) for model in parts.models]
                sources.append(parts.agent_view.responses)
                responses = responses_by_call(sources)
                spans = [parts.root, *parts.model_spans, *(span for span, _ in parts.tools)]
                decisions = decisions_in(spans, options)
            anchor = parts.anchors[index]
            asked = ToolRequest(*request)
            handoff = answered_handoff(asked, responses, options)
            if handoff is not None:
                requested.append((anchor, handoff))
                continue
            call = unexecuted_call(asked, responses, decisions, agent, options)
        if parts.shows(call.name):
            requested.append((anchor, call))
    return requested
