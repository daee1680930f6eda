"""Which convention describes a span.

Conventions are tried in priority order, most specific first: pydantic-ai and Mastra add
meaning to GenAI spans, Vercel legacy spans carry some `gen_ai.*` keys, and OpenInference and
Traceloop keys also appear on spans that follow GenAI. The first decisive view wins; the rest
only fill gaps (see `merge_views`).
"""

from __future__ import annotations

from collections.abc import Callable

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory._genai import (
    GENAI,
    READERS,
    agent_name_of_agent_span,
    model_values,
    read_agent,
    read_model,
)
from tracescore.trajectory._genai_tool import read_tool, tool_execution
from tracescore.trajectory._mastra import MASTRA
from tracescore.trajectory._openinference import OPENINFERENCE
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import MARKERS as PYDANTIC_AI_MARKERS
from tracescore.trajectory._pydantic_ai import PYDANTIC_AI
from tracescore.trajectory._traceloop import TRACELOOP
from tracescore.trajectory._vercel import VERCEL
from tracescore.trajectory._views import (
    Convention,
    ModelValues,
    SpanView,
    ToolValues,
    clean_view,
    merge_views,
)

__all__ = [
    "AI_SPAN_PREFIX",
    "CONVENTIONS",
    "GENAI_EXECUTIONS",
    "OTHER_MARKERS",
    "PYDANTIC_AI_SCOPE",
    "agent_name_of",
    "classify",
]

CONVENTIONS: tuple[Convention, ...] = (
    PYDANTIC_AI,
    MASTRA,
    VERCEL,
    GENAI,
    OPENINFERENCE,
    TRACELOOP,
)


def classify(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """The merged view of `span`, or None when no convention recognises it."""
    attrs = span.attributes
    name = span.name
    # Most spans carry no marker of another convention: then only GenAI may read them. (Names
    # bound in this module: each `semconv.X` or `GENAI.x` is a lookup more per span. A name
    # without the prefix anywhere is told by `in`, a third of a `startswith` call.)
    if (
        OTHER_MARKERS.isdisjoint(attrs)
        and span.scope != PYDANTIC_AI_SCOPE
        and (AI_SPAN_PREFIX not in name or not name.startswith(AI_SPAN_PREFIX))
    ):
        # GenAI's own dispatch (`_genai.read`) for a text operation it reads: a call fewer on
        # the path every GenAI span takes. Any other operation goes through `_genai.read`.
        op = attrs.get(_OPERATION)
        reader = _GENAI_READERS.get(op) if op.__class__ is str else None
        view: SpanView | None
        if reader is not None:
            view = reader(span, options, _GENAI_NAME)
        elif op is not None or name.startswith(_GENAI_NAME_PREFIXES):
            view = _read_genai(span, options)
        else:
            return None
        return view if view is None or _GENAI_CLEAN else clean_view(view)
    candidates = _marked(span)
    if not candidates:
        return None
    if len(candidates) == 1:  # the common case: one convention wrote the span
        convention = candidates[0]
        view = convention.read(span, options)
        if view is None or convention.clean:
            return view
        return clean_view(view)
    views: list[SpanView] = []
    skip: set[str] = set()
    for convention in candidates:
        if convention.name in skip:
            continue
        view = convention.read(span, options)
        if view is not None:
            views.append(view)
            skip.update(convention.extends)
    merged = merge_views(views)
    return clean_view(merged) if merged is not None else None


def agent_name_of(span: SpanRecord, options: BuildOptions) -> str | None:
    """The agent name `classify(span, options)` gives an agent span ("" when unnamed), or
    None when it is no agent span. Where GenAI's own dispatch reads the span as an
    `invoke_agent` one (`read_agent`, whose view is always an agent's and needs no cleaning),
    only its name is read: the assembler asks this of every candidate span at ingest, and
    the whole view (messages, tool definitions) cost ~20,000 instructions a span."""
    attrs = span.attributes
    if (
        attrs.get(_OPERATION) == _INVOKE_AGENT
        and _GENAI_READERS.get(_INVOKE_AGENT) is _read_agent
        and _GENAI_CLEAN
        and OTHER_MARKERS.isdisjoint(attrs)
        and span.scope != PYDANTIC_AI_SCOPE
        and not span.name.startswith(AI_SPAN_PREFIX)
        and attrs[_OPERATION].__class__ is str
    ):
        return _agent_name_of_agent_span(span) or ""
    view = classify(span, options)
    if view is None or view.role != "agent":
        return None
    return view.agent_name or ""


def classify_every_convention(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """`classify` without the marker dispatch: every reader is asked (tests compare both)."""
    views: list[SpanView] = []
    skip: set[str] = set()
    for convention in CONVENTIONS:
        if convention.name in skip:
            continue
        view = convention.read(span, options)
        if view is not None:
            views.append(view)
            skip.update(convention.extends)
    merged = merge_views(views)
    return clean_view(merged) if merged is not None else None


# Dispatch by marker: each reader returns None unless its span carries the key (or scope, or
# name prefix) tested here, so only the readers that can say something are asked; a span
# follows one convention, and asking the other five cost about a fifth of building a run.
# The tests check every recorded fixture span classifies the same with and without this.
_PYDANTIC_AI_MARKERS = frozenset(PYDANTIC_AI_MARKERS)
PYDANTIC_AI_SCOPE = semconv.PYDANTIC_AI_SCOPE
AI_SPAN_PREFIX = semconv.AI_SPAN_PREFIX
_OPERATION = semconv.GEN_AI_OPERATION_NAME
_read_genai = GENAI.read
_read_agent = read_agent
_agent_name_of_agent_span = agent_name_of_agent_span
_INVOKE_AGENT = semconv.OP_INVOKE_AGENT
_GENAI_READERS = READERS
_GENAI_NAME = GENAI.name
_GENAI_CLEAN = GENAI.clean
_GENAI_NAME_PREFIXES = (semconv.OP_EXECUTE_TOOL + " ", semconv.OP_INVOKE_AGENT)
_BY_MASK: tuple[tuple[Convention, ...], ...] = tuple(
    tuple(c for bit, c in enumerate(CONVENTIONS) if mask >> bit & 1)
    for mask in range(1 << len(CONVENTIONS))
)


# Every marker key but GenAI's, in one set: a span with none of them (nor pydantic-ai's scope,
# nor Vercel's name prefix), which is most spans, can only be GenAI or nothing (`classify`).
OTHER_MARKERS = _PYDANTIC_AI_MARKERS | {
    semconv.MASTRA_SPAN_TYPE,
    semconv.AI_OPERATION_ID,
    semconv.OI_SPAN_KIND,
    semconv.TRACELOOP_SPAN_KIND,
    semconv.LLM_REQUEST_TYPE,
}


def _marked(span: SpanRecord) -> tuple[Convention, ...]:
    # Bits in CONVENTIONS order.
    attrs = span.attributes
    name = span.name
    mask = 0
    if span.scope == semconv.PYDANTIC_AI_SCOPE or not _PYDANTIC_AI_MARKERS.isdisjoint(attrs):
        mask = 1
    if semconv.MASTRA_SPAN_TYPE in attrs:
        mask |= 2
    if semconv.AI_OPERATION_ID in attrs or name.startswith(semconv.AI_SPAN_PREFIX):
        mask |= 4
    if semconv.GEN_AI_OPERATION_NAME in attrs or name.startswith(_GENAI_NAME_PREFIXES):
        mask |= 8
    if semconv.OI_SPAN_KIND in attrs:
        mask |= 16
    if semconv.TRACELOOP_SPAN_KIND in attrs or semconv.LLM_REQUEST_TYPE in attrs:
        mask |= 32
    return _BY_MASK[mask]


_VALUES_OF: dict[object, Callable[[SpanRecord, BuildOptions], ToolValues | ModelValues]] = {
    read_tool: tool_execution,
    read_model: model_values,
}
GENAI_EXECUTIONS: dict[str, Callable[[SpanRecord, BuildOptions], ToolValues | ModelValues]] = (
    {op: _VALUES_OF[reader] for op, reader in READERS.items() if reader in _VALUES_OF}
    if GENAI.clean
    else {}
)
"""For the flat-run fast path, by GenAI operation: what a tool execution or an inference span
that only GenAI describes (no `OTHER_MARKERS`, scope or name prefix of another convention, the
test that starts `classify`) says of its step, as `ToolValues` or `ModelValues`: what the view
`classify` gives it holds, without the view."""
