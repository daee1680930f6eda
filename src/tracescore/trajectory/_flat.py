"""The fast path of the builder for the common shape of a trace: one flat agent run.

A flat run is a trace with no repair to make and nothing to join: one agent span at its root,
whose tool and model spans are its direct children; every span has its own id and a known kind,
every parent arrived and sorts before its children; no model span recorded the calls it asked
for (so there are no requests to join to executions), and no view has a warning. Its steps are
then the tool and model spans in (start, end, span id) order, which the general builder
(`_build`) finds after building the forest, assigning runs and joining requests: here one pass
over the sorted spans builds them, with the step and trajectory builders the general path uses.

`build_flat_run` answers exactly what the general path answers for such a trace, or None for
any other trace, before doing anything but classifying spans; the views it read are kept for the
general path, which then does not read those spans again. The tests compare both paths on every
fixture trace, the benchmark's runs and generated variations.

The spans are ordered, then read in one pass that also checks the structure: each span's id,
parent and kind before it is read (that ids are distinct and non-empty, after the pass), and
the first span that makes the run not flat ends the pass.
"""

from __future__ import annotations

from itertools import islice
from operator import attrgetter

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import ModelCall, Trajectory
from tracescore.trajectory._classify import (
    AI_SPAN_PREFIX,
    GENAI_EXECUTIONS,
    OTHER_MARKERS,
    PYDANTIC_AI_SCOPE,
    classify,
)
from tracescore.trajectory._flat_steps import FlatParts, flat_steps
from tracescore.trajectory._genai import GENAI, model_view
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._run import run_trajectory
from tracescore.trajectory._step_calls import model_call
from tracescore.trajectory._tree import MAX_OTLP_KIND
from tracescore.trajectory._values import clean_text
from tracescore.trajectory._views import (
    MODEL_VALUES_LEN,
    ModelValues,
    SpanView,
    ToolValues,
    tool_values,
)

__all__ = ["build_flat_run"]

# The kinds `_tree` accepts without a warning: a span of another kind is not flat.
_KNOWN_KINDS = frozenset(range(MAX_OTLP_KIND + 1))
_START = attrgetter("start_ns")
_ID = attrgetter("span_id")
_STR_ONLY = {str}
_GENAI_NAME = GENAI.name
_OPERATION = semconv.GEN_AI_OPERATION_NAME
# Bound again, not used under their imported names: CPython 3.11 compiles a method call on a
# name a `from` import bound (`.get`, `.isdisjoint`) as an attribute read and a call, expecting
# a module: a bound method made per span, +790 instructions a span (callgrind).
_GENAI_EXECUTIONS = GENAI_EXECUTIONS
_OTHER_MARKERS = OTHER_MARKERS
_PYDANTIC_AI_SCOPE = PYDANTIC_AI_SCOPE
_AI_SPAN_PREFIX = AI_SPAN_PREFIX
_KEY = attrgetter("start_ns", "end_ns", "span_id")
"""The order of steps, as the general path's `Node.key`."""


def build_flat_run(
    spans: list[SpanRecord], options: BuildOptions, views: dict[str, SpanView | None]
) -> Trajectory | None:
    """The one trajectory of a trace's `spans` when they are a flat run, else None.

    `views` receives what was read of each span, by span id, when the trace's ids are distinct
    non-empty strings (so each names one span): a view or None, for the general path to reuse
    when this returns None; a span not read, or whose reader raised, is left out.
    """
    if not spans:
        return None
    try:
        ordered = _in_order(spans)
    except TypeError:  # times of unexpected types: the general path copes
        return None
    read: dict[str, SpanView | ToolValues | ModelValues | None] = {}
    trajectory = _flat_run(ordered, options, read)
    if trajectory is None and read and _ids_name_spans(spans):  # for the general path
        # (which reads the executions kept as their values again)
        for sid, view in read.items():
            if view.__class__ is not tuple:
                views[sid] = view  # type: ignore[assignment]
            elif len(view) == MODEL_VALUES_LEN:
                views[sid] = model_view(view, _GENAI_NAME, options)
    return trajectory


def _flat_run(
    ordered: list[SpanRecord],
    options: BuildOptions,
    read: dict[str, SpanView | ToolValues | ModelValues | None],
) -> Trajectory | None:
    """The trajectory of the spans `ordered`, each span's view kept in `read`, or None unless
    they are a flat run.

    Its structure, checked as the spans are read: str ids, known kinds, one root, every other
    span's parent present and sorting before it (so no cycle, no clock skew); the root then
    sorts first; after the pass, distinct non-empty ids. The ids of the spans before a span are
    the keys of `read`.
    """
    root = ordered[0]
    root_id = root.span_id
    try:
        if root_id.__class__ is not str or root.parent_span_id:
            return None
        if root.kind not in _KNOWN_KINDS:
            return None
    except TypeError:  # a kind of an unexpected type: the general path copes
        return None
    agent_view = _read(root, options, read)
    if agent_view is None or agent_view.role != "agent" or agent_view.warnings:
        return None
    agent = agent_view.agent_name or clean_text(root.name)
    parts = FlatParts(root, agent_view, agent)
    order = parts.order
    tools = parts.tools
    models = parts.models
    model_spans = parts.model_spans
    model_steps = parts.model_steps
    answers: list[SpanView] = []  # the views of `models` that `run_trajectory` may read
    for span in islice(ordered, 1, None):
        sid = span.span_id
        parent = span.parent_span_id
        try:  # (ids are told distinct and non-empty after the pass, in one test)
            if sid.__class__ is not str or parent not in read or span.kind not in _KNOWN_KINDS:
                return None
        except TypeError:  # a parent or kind of an unexpected type: the general path copes
            return None
        # `_read`, inlined: a call fewer per span. A tool execution or an inference span only
        # GenAI describes (`classify`'s first test, inlined) is read as its values, a call
        # fewer again; every other span is classified.
        attrs = span.attributes
        try:  # (no test of the operation's class: only text equals a key)
            execution = _GENAI_EXECUTIONS.get(attrs.get(_OPERATION))  # type: ignore[arg-type]
        except TypeError:  # an unhashable operation: classified
            execution = None
        name = span.name
        if (
            execution is not None
            and _OTHER_MARKERS.isdisjoint(attrs)
            and span.scope != _PYDANTIC_AI_SCOPE
            and (_AI_SPAN_PREFIX not in name or not name.startswith(_AI_SPAN_PREFIX))
        ):
            try:
                values = read[sid] = execution(span, options)
            except Exception:
                return None  # the general path reads the span again, and warns
            # GenAI values (no warnings, no output tool), under the agent span itself: no outer
            # tool span to merge into, no nested run.
            if parent != root_id:
                return None
            if len(values) != MODEL_VALUES_LEN:  # an execution's `ToolValues`
                order.append(len(tools))
                tools.append((span, values))
                continue
            # An inference span's `ModelValues`: its model call as `model_call` makes it
            # (model, input and output tokens, start, end, span id), inlined.
            model, input_tokens, output_tokens, output, asked, tool_names, raw_inputs = values
            # The trajectory reads a model's input, answer and tools only (`run_trajectory`):
            # a model span read as values gets a view only when it recorded an input, tools,
            # or an answer that asked for no tool; the others (most) change nothing there.
            if raw_inputs is not None or tool_names or (output and not asked):
                answers.append(model_view(values, _GENAI_NAME, options))
            order.append(~len(models))
            models.append(values)
            model_spans.append(span)
            model_steps.append(
                ModelCall(
                    model,
                    input_tokens,
                    output_tokens,
                    span.start_ns or None,
                    span.end_ns or None,
                    sid,
                )
            )
            if asked is not None:
                parts.recorded = True
                if asked and not parts.add_requests(asked, span.end_ns or span.start_ns):
                    return None
            continue
        try:
            view = read[sid] = classify(span, options)
        except Exception:
            return None  # (as above)
        if view is None:
            continue
        if view.warnings:
            return None
        role = view.role
        if role == "tool":  # (as above)
            if parent != root_id or view.output_tool:
                return None
            order.append(len(tools))
            tools.append((span, tool_values(view)))
        elif role == "model":
            # Output tools a model span names change which calls are shown.
            if parent != root_id or view.output_tool_names:
                return None
            order.append(~len(models))
            models.append(view)
            answers.append(view)
            model_spans.append(span)
            model_steps.append(model_call(view, span, sid))
            asked = view.requests
            if asked is not None:
                parts.recorded = True
                if asked and not parts.add_requests(asked, span.end_ns or span.start_ns):
                    return None
        elif role == "agent" or role == "handoff":
            return None  # a second agent (a sub-run, or one nested too deep), or a handoff
    if len(read) != len(ordered) or "" in read:  # an id repeated (a view replaced), or empty
        return None
    steps = flat_steps(parts, options)
    if steps is None:
        return None
    # A flat run has no sub-agent: a second agent span sends it to the general path (above).
    return run_trajectory(root, root_id, agent, [agent_view], answers, steps, options, False)


def _in_order(spans: list[SpanRecord]) -> list[SpanRecord]:
    """`spans` in (start, end, span id) order."""
    # With distinct starts (the usual case), the start alone orders spans as the full key does,
    # and int keys sort three times cheaper than tuples.
    starts_differ = len(set(map(_START, spans))) == len(spans)
    return sorted(spans, key=_START if starts_differ else _KEY)


def _ids_name_spans(spans: list[SpanRecord]) -> bool:
    """Whether the span ids of `spans` are distinct non-empty strings, so views kept by id may
    be reused (asked when the pass declined, maybe before it saw every id)."""
    try:
        ids = set(map(_ID, spans))
    except TypeError:  # an id of an unhashable type
        return False
    return len(ids) == len(spans) and set(map(type, ids)) == _STR_ONLY and "" not in ids


def _read(
    span: SpanRecord,
    options: BuildOptions,
    read: dict[str, SpanView | ToolValues | ModelValues | None],
) -> SpanView | None:
    """`classify(span)`, kept in `read`."""
    try:
        view = read[span.span_id] = classify(span, options)
    except Exception:
        # A warning makes the fast path decline; `read` has no view of the span, so the
        # general path reads it again and warns that it could not be read.
        return _UNREADABLE
    return view


_UNREADABLE = SpanView("other", "unreadable", warnings=("could not be read",))
