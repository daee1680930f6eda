"""The fast path of the builder for the common shape of a trace: one flat agent run.

A flat run is a trace with no repair to make and nothing to join by name: one agent span at its
root, whose tool and model spans are its direct children; every span has its own id and a known
kind, every parent arrived and sorts before its children; the calls its model spans recorded
asking for are joined to their executions by call id, and no view has a warning. Its steps are
then the tool and model spans in (start, end, span id) order, with the requested calls in the
order asked, which the general builder (`_build`) finds after building the forest, assigning
runs and joining requests: here one pass over the sorted spans builds them in the usual orders
(`_flat_parts`), two where a run needs it (`_flat_steps`), with the step and trajectory
builders the general path uses.

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
from typing import Literal

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import ModelCall, Step, Trajectory
from tracescore.trajectory._classify import (
    AI_SPAN_PREFIX,
    GENAI_EXECUTIONS,
    OTHER_MARKERS,
    PYDANTIC_AI_SCOPE,
    classify,
)
from tracescore.trajectory._flat_parts import FlatParts
from tracescore.trajectory._flat_steps import flat_steps
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
    request_values,
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
    # By start alone (int keys sort three times cheaper than tuples): the order of steps, (start,
    # end, span id), when spans start at distinct times, which the one pass checks (`_pass`).
    try:
        ordered = sorted(spans, key=_START)
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
    """The trajectory of the spans `ordered` (in start order), each span's view kept in `read`,
    or None unless they are a flat run.

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
    # One pass makes each step as its span is read, in the order read; where that is not the
    # order of the steps (tied starts, `FlatParts.execute`, `joined_steps`), the spans are
    # read again, in (start, end, span id) order, in a pass that keeps what each said, for
    # `flat_steps` to join.
    parts = FlatParts(root, agent_view, agent, options, True)
    steps = _pass(ordered, options, read, parts)
    if steps is False:
        try:
            ordered = _in_order(ordered)
        except TypeError:  # (as above)
            return None
        if ordered[0] is not root:  # (tied with the root's start: the general path decides)
            return None
        read.clear()  # (the parents' test reads its keys)
        read[root_id] = agent_view
        parts = FlatParts(root, agent_view, agent, options, False)
        steps = _pass(ordered, options, read, parts)
    if steps is None or steps is False:
        return None
    # A flat run has no sub-agent: a second agent span sends it to the general path (`_pass`).
    return run_trajectory(root, root_id, agent, [agent_view], parts.answers, steps, options, False)


def _pass(
    ordered: list[SpanRecord],
    options: BuildOptions,
    read: dict[str, SpanView | ToolValues | ModelValues | None],
    parts: FlatParts,
) -> tuple[Step, ...] | Literal[False] | None:
    """The steps of the spans `ordered` after their root, each span's view kept in `read`;
    None unless they are a flat run, False when they need two passes (`parts.one_pass`)."""
    root_id = parts.root.span_id
    one_pass = parts.one_pass
    execute = parts.execute if one_pass else parts.keep
    steps = parts.steps
    order = parts.order
    models = parts.models
    model_spans = parts.model_spans
    model_steps = parts.model_steps
    answers = parts.answers
    first_model: SpanView | ModelValues | None = None  # (for `denied_earlier`)
    first_start = 0
    last_model_span: SpanRecord | None = None
    last_start = parts.root.start_ns
    for span in islice(ordered, 1, None):
        # Spans in start order are in steps order when no two starts tie (in one pass only:
        # two passes read them in steps order).
        start = span.start_ns
        if start == last_start and one_pass:
            return False
        last_start = start
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
        model: SpanView | ModelValues
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
                executed = execute(span, values)
                if not executed:
                    return executed  # (False: two passes; None: not a flat run)
                continue
            # An inference span's `ModelValues`: its model call as `model_call` makes it
            # (model, input and output tokens, start, end, span id), inlined.
            model = values
            model_name, input_tokens, output_tokens, output, asked, tool_names, raw_inputs = values
            # The trajectory reads a model's input, answer and tools only (`run_trajectory`):
            # a model span read as values gets a view only when it recorded an input, tools,
            # or an answer that asked for no tool; the others (most) change nothing there.
            if raw_inputs is not None or tool_names or (output and not asked):
                answers.append(model_view(values, _GENAI_NAME, options))
            step = ModelCall(
                model_name, input_tokens, output_tokens, start or None, span.end_ns or None, sid
            )
        else:
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
                executed = execute(span, tool_values(view))
                if not executed:
                    return executed  # (as above)
                continue
            if role == "agent" or role == "handoff":
                return None  # a second agent (a sub-run, or one nested too deep), or a handoff
            if role != "model":
                continue
            # Output tools a model span names change which calls are shown.
            if parent != root_id or view.output_tool_names:
                return None
            model = view
            answers.append(view)
            step = model_call(view, span, sid)
            asked = None if view.requests is None else request_values(view.requests)
        if one_pass:
            last_model_span = span
            if first_model is None:
                first_model = model
                first_start = start
            steps.append(step)
        else:
            order.append(~len(models))
            models.append(model)
            model_spans.append(span)
            model_steps.append(step)
        if asked is not None:
            parts.recorded = True
            if asked and not parts.add_requests(asked, span.end_ns or start):
                return None
    if len(read) != len(ordered) or "" in read:  # an id repeated (a view replaced), or empty
        return None
    if not one_pass:
        return flat_steps(parts, options)
    done = parts.joined_steps(first_model, first_start, ordered, last_model_span)
    return False if done is None else done


def _in_order(ordered: list[SpanRecord]) -> list[SpanRecord]:
    """The spans `ordered` (in start order) in (start, end, span id) order."""
    if len(set(map(_START, ordered))) == len(ordered):  # distinct starts: already
        return ordered
    return sorted(ordered, key=_KEY)


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
