"""A run's trajectory around its steps: input, output and available tools, read from its hint
views (the agent span's; with no agent span, the trace's `other` spans) and its model views.

Shared by the general builder and the flat-run fast path, so both fill a trajectory alike.
"""

from __future__ import annotations

from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Step, Trajectory
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import is_output_tool
from tracescore.trajectory._views import SpanView

__all__ = ["run_trajectory"]


def run_trajectory(
    span: SpanRecord,
    span_id: str,
    agent: str | None,
    hints: list[SpanView],
    models: list[SpanView],
    steps: tuple[Step, ...],
    options: BuildOptions,
    has_subagents: bool,
) -> Trajectory:
    """The trajectory of the run whose span is `span`; `models` in (start, end, span id) order;
    `has_subagents`: whether `steps` hold a sub-agent run (the builder made them)."""
    # Positional (keywords cost several times more), in field order: trace id, span id, agent,
    # input, output, available tools, steps, start, end, complete, attributes, resource,
    # warnings, has_subagents.
    return Trajectory(
        span.trace_id,
        span_id,
        agent,
        _input(hints, models),
        _output(hints, models),
        _tools(hints, models, options),
        steps,
        span.start_ns or None,
        span.end_ns or None,
        True,
        dict(span.attributes),
        span.resource,
        (),
        has_subagents,
    )


def _resolve(value: object) -> str | None:
    if callable(value):
        value = value()
    return value if isinstance(value, str) and value else None


def _input(hints: list[SpanView], models: list[SpanView]) -> str | None:
    for hint in hints:
        text = _resolve(hint.input)
        if text:
            return text
    for view in models:
        value = view.input
        if value is not None:  # most model spans recorded no input: skip the call
            text = _resolve(value)
            if text:
                return text
    return None


def _output(hints: list[SpanView], models: list[SpanView]) -> str | None:
    for hint in hints:
        if hint.output:
            return hint.output
    # Else the last model answer that asked for no tool: the final answer of the loop.
    for view in reversed(models):
        if view.output and not view.requests:
            return view.output
    return None


def _tools(hints: list[SpanView], models: list[SpanView], options: BuildOptions) -> tuple[str, ...]:
    names: list[str] = []
    sources = [h.tools for h in hints if h.tools]
    if not sources:
        sources = [view.tools for view in models if view.tools]
        if not sources:
            return ()
    excluded = set(options.output_tool_names)
    for view in models:
        if view.output_tool_names:
            excluded.update(view.output_tool_names)
    for tools in sources:
        for name in tools:
            if name in names:
                continue
            if not options.include_output_tools and is_output_tool(name, tuple(excluded)):
                continue
            names.append(name)
    return tuple(names)
