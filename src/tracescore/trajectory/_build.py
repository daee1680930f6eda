"""`build_trajectories`: spans in, one trajectory per agent run out.

A run is the subtree of an agent span, stopping at nested agent spans, which are runs of their
own and appear in the parent as one `AgentStep`. With no agent span in a trace, the trace root
is the run. Runs are built deepest first so a parent can embed its sub-agents' steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from operator import attrgetter
from typing import Any

from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import AgentStep, Step, Trajectory
from tracescore.trajectory._classify import classify
from tracescore.trajectory._flat import build_flat_run
from tracescore.trajectory._options import BuildOptions, BuildResult
from tracescore.trajectory._run import run_trajectory
from tracescore.trajectory._steps import RunParts, build_steps
from tracescore.trajectory._tree import NODE_KEY, Issues, Node, build_forest
from tracescore.trajectory._values import clean_text
from tracescore.trajectory._views import SpanView

__all__ = ["build_trajectories"]

_TRACE_ID = attrgetter("trace_id")
_HINT_ROLES = ("other", "agent")
_DEFAULT_OPTIONS = BuildOptions()  # frozen, so one instance serves every call

# A module variable, read on every call, so tests can switch the fast path off (None).
_flat_run: (
    Callable[[list[SpanRecord], BuildOptions, dict[str, SpanView | None]], Trajectory | None] | None
)
_flat_run = build_flat_run
_NOT_READ: Any = object()  # a span the fast path did not read (a view may be None)


def build_trajectories(
    spans: Iterable[SpanRecord], options: BuildOptions | None = None, *, trace_id: str = ""
) -> BuildResult:
    """Rebuild every agent run in `spans`, whatever instrumentation wrote them.

    Never raises on bad spans: each problem becomes a counted warning naming the trace.
    Trajectories come ordered by trace (earliest start, then trace id), then by run start.
    `trace_id`: the trace of every span, when the caller grouped them (as the assembler does):
    they are then not grouped again, and a list of spans is read as it is, not copied.
    """
    options = options or _DEFAULT_OPTIONS
    if trace_id:  # the builder only reads the list (tests/trajectory/test_build.py checks)
        listed = spans if isinstance(spans, list) else list(spans)
        if listed:
            trajectories, warnings = _build_trace(trace_id, listed, options)
            return BuildResult(trajectories, warnings)
    spans = list(spans)
    trace_ids = set(map(_TRACE_ID, spans))
    if len(trace_ids) == 1:  # one trace (what the service builds): no order of traces to decide
        trajectories, warnings = _build_trace(trace_ids.pop(), spans, options)
        return BuildResult(trajectories, warnings)
    by_trace: dict[str, list[SpanRecord]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    traces: list[tuple[tuple[int, str], list[Trajectory], list[str]]] = []
    for tid, trace_spans in by_trace.items():
        trajectories, warnings = _build_trace(tid, trace_spans, options)
        first = min((s.start_ns for s in trace_spans), default=0)
        traces.append(((first, tid), trajectories, warnings))
    traces.sort(key=lambda t: t[0])
    result = BuildResult()
    for _, trajectories, warnings in traces:
        result.trajectories.extend(trajectories)
        result.warnings.extend(warnings)
    return result


def _build_trace(
    trace_id: str, spans: list[SpanRecord], options: BuildOptions
) -> tuple[list[Trajectory], list[str]]:
    views: dict[str, SpanView | None] = {}  # span id -> what the fast path read
    if _flat_run is not None:
        flat = _flat_run(spans, options, views)
        if flat is not None:
            return [flat], []
    issues = Issues(trace_id)
    nodes, roots, parents_first = build_forest(spans, issues)
    runs = _read_and_assign(parents_first, options, issues, views)
    members: dict[Node | None, list[Node]] = {}
    for node in nodes:  # nodes are in (start, end, span id) order, so members are too
        group = members.get(node.owner)
        if group is None:
            members[node.owner] = [node]
        else:
            group.append(node)
    if not runs:
        if not roots:
            return [], issues.messages()
        run_node = next((r for r in roots if not r.span.parent_span_id), roots[0])
        runs = [run_node]
        members = {run_node: members.get(None, [])}
    else:
        for node in members.get(None, []):
            if node.view is not None and node.view.role in ("tool", "model", "handoff"):
                issues.add("tool or model spans outside any agent run (left out)", node.span_id)
    built: dict[Node, tuple[str | None, tuple[Step, ...]]] = {}
    trajectories: list[Trajectory] = []
    complete = not issues.incomplete
    # Parents first, reversed: sub-agents before their parents. (The order of the runs
    # themselves is decided by the sort below: their sort keys are unique.)
    for run_node in reversed(runs):
        trajectory = _build_run(run_node, members.get(run_node, []), built, options)
        trajectories.append(trajectory)
    messages = issues.messages()
    if len(trajectories) > 1:
        trajectories.sort(key=_trajectory_key)
    return [_finish(t, complete, messages) for t in trajectories], messages


def _read_and_assign(
    parents_first: list[Node],
    options: BuildOptions,
    issues: Issues,
    views: dict[str, SpanView | None],
) -> list[Node]:
    """Classify every node (unless `views` has its view by span id, as the fast path leaves it
    when it declines) and give it its run; return the run nodes, parents first.

    A node inherits from its parent (already done, as nodes come parents first): its run is
    the parent when the parent is a run, else the parent's run, and its tool ancestor is the
    nearest tool span between it and that run.
    """
    runs: list[Node] = []
    depths: dict[Node, int] = {}  # a run's depth: the runs from a root down to it
    max_depth = options.max_agent_depth
    for node in parents_first:
        view = views.get(node.span_id, _NOT_READ) if views else _NOT_READ
        if view is _NOT_READ:
            try:
                view = classify(node.span, options)
            except Exception as exc:  # a reader bug must cost one span, never the trace
                issues.add("spans that could not be read", f"{node.span_id}: {exc!r}"[:200])
                view = None
        node.view = view
        if view is not None and view.warnings:
            for warning in view.warnings:
                issues.add(warning, node.span_id)
        parent = node.parent
        if parent is not None:
            if parent.is_run:
                node.owner = parent
            else:
                node.owner = parent.owner
                above = parent.view
                node.tool_ancestor = (
                    parent if above is not None and above.role == "tool" else parent.tool_ancestor
                )
        if view is not None and view.role == "agent":
            owner = node.owner
            depth = depths[owner] if owner is not None else 0
            if depth < max_depth:
                node.is_run = True
                depths[node] = depth + 1
                runs.append(node)
            else:
                issues.add(
                    f"agent spans nested deeper than {max_depth} "
                    "(read as part of their parent run)",
                    node.span_id,
                )
    return runs


def _build_run(
    run_node: Node,
    members: list[Node],
    built: dict[Node, tuple[str | None, tuple[Step, ...]]],
    options: BuildOptions,
) -> Trajectory:
    view = run_node.view if run_node.view is not None else SpanView("other", "none")
    is_agent = run_node.is_run
    hints: list[SpanView]
    agent: str | None
    if is_agent:
        # Members come in node order, (start, end, span id), and never hold their own run node.
        steps_from = members
        hints = [view]
        agent = view.agent_name or clean_text(run_node.span.name)
    else:
        # The trace-root run (no agent span) also counts the root itself when it is a step.
        steps_from = sorted({id(n): n for n in [run_node, *members]}.values(), key=NODE_KEY)
        # With no agent span, `other` spans (a workflow root, Vercel's ai.generateText) lend
        # the run its name, input and output; the root's own view comes first.
        hints = [n.view for n in steps_from if n.view is not None and n.view.role in _HINT_ROLES]
        if run_node.view is not None and run_node.view.role in _HINT_ROLES:
            hints.remove(run_node.view)
            hints.insert(0, run_node.view)
        agent = _first(h.agent_name for h in hints)
    models: list[Node] = []
    tools: list[Node] = []
    subagents: list[tuple[Node, AgentStep]] = []
    for node in steps_from:
        step_view = node.view
        if step_view is None:
            continue
        role = step_view.role
        if role == "model":
            models.append(node)
        elif role == "tool" or role == "handoff":
            # A handoff is joined to the model's call like an execution (`build_steps`).
            tools.append(node)
        elif node.is_run and node is not run_node and node in built:
            name, sub_steps = built[node]
            sub = node.span
            # Positional: name, span id, start, end, steps.
            step = AgentStep(
                name or clean_text(sub.name),
                node.span_id,
                sub.start_ns or None,
                sub.end_ns or None,
                sub_steps,
            )
            subagents.append((node, step))
    fallback = view.role == "agent"
    parts = RunParts(
        agent,
        run_node,
        models,
        tools,
        subagents,
        view.requests or () if fallback else (),
        view.responses if fallback else None,
    )
    steps = build_steps(parts, options)
    built[run_node] = (agent, steps)
    model_views = [node.view for node in models if node.view is not None]
    # Every sub-agent made above is one of the steps (`build_steps` merges them all in).
    return run_trajectory(
        run_node.span, run_node.span_id, agent, hints, model_views, steps, options, bool(subagents)
    )


def _first(values: Iterable[str | None]) -> str | None:
    for value in values:
        if value:
            return value
    return None


def _trajectory_key(t: Trajectory) -> tuple[int, int, str]:
    return (t.start_ns or 0, t.end_ns or 0, t.span_id or "")


def _finish(t: Trajectory, complete: bool, warnings: list[str]) -> Trajectory:
    if complete and not warnings:
        return t
    return replace(t, complete=complete, warnings=tuple(warnings))
