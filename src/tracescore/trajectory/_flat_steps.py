"""The steps of a flat run (`_flat`): its requested calls joined to their executions by call id.

A flat run's model spans may record the calls they asked for (`tool_call` parts of their
output messages, the shape SDKs with message capture send), and its tool spans repeat their
ids. Steps are then made as `_steps.build_steps` makes them, from the same step builders, but
without its nodes: requests in the order asked (each joined to the first tool span with its id,
or else paused, denied or answered as `_unexecuted` decides), merged into the model calls and the
executions nobody asked for, in (start, end, span id) order.

Requests are joined by call id only: a request or an execution without an id (joined by name
and order) is left to the general path (`flat_steps` answers None).
"""

from __future__ import annotations

from functools import lru_cache

from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Step
from tracescore.trajectory._genai import model_responses
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import output_tool_prefixes
from tracescore.trajectory._step_calls import executed_call, paused_for_approval
from tracescore.trajectory._step_order import merge_steps
from tracescore.trajectory._unexecuted import (
    answered_handoff,
    decisions_in,
    denied_earlier,
    responses_by_call,
    unexecuted_call,
)
from tracescore.trajectory._views import (
    TOOL_CALL_ID,
    LazyResponses,
    ModelValues,
    Response,
    SpanView,
    ToolRequest,
    ToolValues,
)

__all__ = ["FlatParts", "flat_steps"]


class FlatParts:
    """What the pass over a flat run collected: its model and tool spans, and the requests.

    `order` lists the steps other than requested calls, in (start, end, span id) order: an
    index into `tools` for a tool span (with what it says of its call), `~k` (negative) for
    the model call `model_steps[k]`.
    """

    __slots__ = (
        "agent",
        "agent_view",
        "anchors",
        "by_id",
        "model_spans",
        "model_steps",
        "models",
        "order",
        "recorded",
        "requests",
        "root",
        "tools",
    )

    def __init__(self, root: SpanRecord, agent_view: SpanView, agent: str | None) -> None:
        self.root = root
        self.agent_view = agent_view
        self.agent = agent
        # A GenAI inference span as its values, another convention's as its view.
        self.models: list[SpanView | ModelValues] = []
        self.model_spans: list[SpanRecord] = []
        self.model_steps: list[Step] = []  # (model calls only)
        self.tools: list[tuple[SpanRecord, ToolValues]] = []
        self.order: list[int] = []
        self.requests: list[ToolRequest] = []
        self.anchors: list[int] = []  # when each request was asked for: its model span's end
        self.by_id: dict[str, int] = {}  # call id -> index in `requests` (the first one wins)
        self.recorded = False  # a model span recorded its output messages (maybe no call)

    def add_requests(self, asked: tuple[ToolRequest, ...], anchor: int) -> bool:
        """Add the requests `asked` at `anchor`, but a call id already asked for (the same call
        recorded twice, e.g. by a retried stream); False when one has no call id."""
        requests, anchors, by_id = self.requests, self.anchors, self.by_id
        for request in asked:
            call_id = request.call_id
            if call_id is None:
                return False
            if call_id not in by_id:
                by_id[call_id] = len(requests)
                requests.append(request)
                anchors.append(anchor)
        return True


def flat_steps(parts: FlatParts, options: BuildOptions) -> tuple[Step, ...] | None:
    """The steps of the flat run `parts`, or None when a call must be joined by name."""
    # The agent span's own record of the exchange stands in when no model span recorded one
    # (content capture off on chat spans), asked for when the run started.
    fallback = parts.agent_view.requests
    if not parts.recorded and fallback and not parts.add_requests(fallback, parts.root.start_ns):
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
    # Output tools are left out unless `include_output_tools` (`shows_unrequested`: no view
    # here is an output tool). `is_output_tool(name, hidden)` is inlined, its prefixes made
    # once per run: calls fewer per tool call.
    hidden, prefixes = _hidden_tools(options.include_output_tools, options.output_tool_names)
    # Model spans come in (start, end, span id) order: the last one started last.
    last_model = parts.model_spans[-1].start_ns if parts.model_spans else 0
    approval = options.pause.awaiting_approval
    requested = (
        _requested(parts, executions, hidden, prefixes, last_model, options) if requests else []
    )
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
            name = call.name
            if not name or not (name in hidden or name.startswith(prefixes)):
                starts.append(start)
                steps.append(call)
    # Only a first model call that recorded its input can tell of earlier denials: most
    # runs make no generator for `denied_earlier` to turn down.
    first = _responses_of(parts.models[0], options) if parts.models else None
    if first is not None:
        executed = (
            values[TOOL_CALL_ID] for index, (_, values) in enumerate(tools) if unrequested[index]
        )
        requested[:0] = denied_earlier(
            first, model_spans[0].start_ns, parts.by_id, executed, agent, options
        )
    return merge_steps(requested, starts, steps)


@lru_cache(maxsize=16)  # (few distinct options: made once per run, not per call)
def _hidden_tools(shown: bool, names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The output tools left out of a run's steps (none when `shown`), and the prefixes of
    their suffixed variants (`output_tool_prefixes`)."""
    hidden = () if shown else tuple(sorted(set(names)))
    return hidden, output_tool_prefixes(hidden)


def _requested(
    parts: FlatParts,
    executions: list[tuple[SpanRecord, ToolValues] | None],
    hidden: tuple[str, ...],
    prefixes: tuple[str, ...],
    last_model: int,
    options: BuildOptions,
) -> list[tuple[int, Step]]:
    """The requested calls in the order asked, each with its anchor time, but the output tools
    `hidden` (`prefixes`: their `output_tool_prefixes`)."""
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
                sources = [_responses_of(model, options) for model in parts.models]
                sources.append(parts.agent_view.responses)
                responses = responses_by_call(sources)
                spans = [parts.root, *parts.model_spans, *(span for span, _ in parts.tools)]
                decisions = decisions_in(spans, options)
            anchor = parts.anchors[index]
            handoff = answered_handoff(request, responses, options)
            if handoff is not None:
                requested.append((anchor, handoff))
                continue
            call = unexecuted_call(request, responses, decisions, agent, options)
        name = call.name
        if not name or not (name in hidden or name.startswith(prefixes)):
            requested.append((anchor, call))
    return requested


def _responses_of(model: SpanView | ModelValues, options: BuildOptions) -> LazyResponses | None:
    """A model span's recorded responses (its view's `responses`), read when asked."""
    if model.__class__ is SpanView:
        return model.responses
    return model_responses(model, options)  # type: ignore[arg-type]
