"""Which convention describes a span, and which attribute keys the builder reads at all.

Conventions are tried in priority order, most specific first: pydantic-ai and Mastra add
meaning to GenAI spans, Vercel legacy spans carry some `gen_ai.*` keys, and OpenInference and
Traceloop keys also appear on spans that follow GenAI. The first decisive view wins; the rest
only fill gaps (see `merge_views`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TypeAlias, overload

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Reading
from tracescore.trajectory._genai import (
    GENAI,
    MODEL_USAGE_KEYS,
    READERS,
    agent_name_of_agent_span,
    model_values,
    read_agent,
    read_model,
    read_tool,
    tool_execution,
)
from tracescore.trajectory._mastra import MASTRA
from tracescore.trajectory._messages import ERROR_RESULT_NEEDLES
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
    "CONVENTIONS",
    "NEEDED_KEYS",
    "NEEDED_PREFIXES",
    "READING_CONDITIONS",
    "READING_KEYS",
    "KeepKey",
    "agent_name_of",
    "attribute_filter",
    "classify",
    "needed_attribute",
    "value_kept",
]

CONVENTIONS: tuple[Convention, ...] = (
    PYDANTIC_AI,
    MASTRA,
    VERCEL,
    GENAI,
    OPENINFERENCE,
    TRACELOOP,
)

# Interned (semconv's own objects, interned first): the scanner interns the keys it decodes,
# so the keys of a record are these very objects and lookups end at the pointer compare.
NEEDED_KEYS: frozenset[str] = frozenset(
    map(sys.intern, set().union(*(c.keys for c in CONVENTIONS)))
)
NEEDED_PREFIXES: tuple[str, ...] = tuple(sorted({p for c in CONVENTIONS for p in c.prefixes}))


def needed_attribute(key: str) -> bool:
    """True when the builder reads attribute `key`: a receiver may drop every other key.

    Span names, status, events and resource attributes are always kept by the decoders; this
    only filters span attributes.
    """
    return key in NEEDED_KEYS or (bool(NEEDED_PREFIXES) and key.startswith(NEEDED_PREFIXES))


# The attributes behind each optional part of a run (`Reading`). Only OTel GenAI's: each of
# these keys feeds that part and nothing else the builder reads (arguments are not used to pair
# requested calls with executions, models and tokens only fill ModelCall), so leaving one
# undecoded changes that part alone. Other conventions' keys (OpenInference's `input.value`,
# say) serve several parts and are always kept.
READING_KEYS: Mapping[Reading, frozenset[str]] = {
    "tool_arguments": frozenset({semconv.GEN_AI_TOOL_CALL_ARGUMENTS}),
    "tool_results": frozenset(),
    "model_usage": MODEL_USAGE_KEYS,
}
# Keys behind a part that also say something the builder always reads: left undecoded when the
# part is not read unless their string value holds one of these texts. A GenAI tool result is
# read for its MCP `isError`, which makes a failed call, and every such result holds one of
# ERROR_RESULT_NEEDLES (`may_be_error_result`).
READING_CONDITIONS: Mapping[Reading, Mapping[str, tuple[str, ...]]] = {
    "tool_results": {semconv.GEN_AI_TOOL_CALL_RESULT: ERROR_RESULT_NEEDLES},
}

KeepKey: TypeAlias = Callable[[str], bool | tuple[str, ...]]
"""Whether a receiver decodes attribute key `key`: True, False, or texts: only a string value
holding one of them (any other value is decoded; see `value_kept`)."""


def value_kept(kept: bool | tuple[str, ...], value: object) -> bool:
    """Whether a value of a key `kept` (a `KeepKey` answer) is decoded: always for True, never
    for False; for texts, unless it is an ASCII str holding none of them (the scanner decides
    on the value's bytes, and decodes the others as usual)."""
    if kept is True or kept is False:
        return kept
    return not (isinstance(value, str) and value.isascii() and not any(t in value for t in kept))


def attribute_filter(extra_keys: Iterable[str] = (), unread: Iterable[Reading] = ()) -> KeepKey:
    """`needed_attribute` plus keys something else reads (e.g. scenario `match.attributes`),
    less the keys behind parts of a run nothing will read (`unread`, see READING_KEYS and
    READING_CONDITIONS, whose keys it answers with their texts).

    Trajectories keep their agent span's attributes for scenario matching; a receiver that
    filters keys must keep those a config matches on too, even when a part left unread would
    have dropped them.
    """
    extra = frozenset(extra_keys)
    unread = frozenset(unread)
    dropped = frozenset().union(*(READING_KEYS[part] for part in unread)) - extra
    conditions = {
        key: texts
        for part in unread
        for key, texts in READING_CONDITIONS.get(part, {}).items()
        if key not in extra
    }
    if not extra and not dropped and not conditions:
        return needed_attribute
    keys = (NEEDED_KEYS | extra) - dropped

    def keep(key: str) -> bool | tuple[str, ...]:
        # No dropped or conditional key starts with a needed prefix (test_classify checks),
        # so the prefix test needs no second look at them.
        if key in keys:
            return conditions.get(key, True)
        return key.startswith(NEEDED_PREFIXES)

    return keep


@overload
def classify(span: SpanRecord, options: BuildOptions) -> SpanView | None: ...


@overload
def classify(
    span: SpanRecord, options: BuildOptions, executions: bool
) -> SpanView | ToolValues | ModelValues | None: ...


def classify(
    span: SpanRecord, options: BuildOptions, executions: bool = False
) -> SpanView | ToolValues | ModelValues | None:
    """The merged view of `span`, or None when no convention recognises it.

    With `executions`, a tool execution or an inference span only GenAI describes comes as its
    `ToolValues` or `ModelValues` (what its view would hold) instead: the flat-run fast path
    makes its steps from those.
    """
    attrs = span.attributes
    name = span.name
    # Most spans carry no marker of another convention: then only GenAI may read them. (Names
    # bound in this module: each `semconv.X` or `GENAI.x` is a lookup more per span. A name
    # without the prefix anywhere is told by `in`, a third of a `startswith` call.)
    if (
        _OTHER_MARKERS.isdisjoint(attrs)
        and span.scope != _PYDANTIC_AI_SCOPE
        and (_AI_SPAN_PREFIX not in name or not name.startswith(_AI_SPAN_PREFIX))
    ):
        # GenAI's own dispatch (`_genai.read`) for a text operation it reads: a call fewer on
        # the path every GenAI span takes. Any other operation goes through `_genai.read`.
        op = attrs.get(_OPERATION)
        reader = _GENAI_READERS.get(op) if op.__class__ is str else None
        view: SpanView | None
        if reader is not None:
            if executions and _GENAI_CLEAN:
                if reader is _READ_TOOL:
                    return _tool_execution(span, options)
                if reader is _READ_MODEL:
                    return _model_values(span, options)
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
        and _OTHER_MARKERS.isdisjoint(attrs)
        and span.scope != _PYDANTIC_AI_SCOPE
        and not span.name.startswith(_AI_SPAN_PREFIX)
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
_PYDANTIC_AI_SCOPE = semconv.PYDANTIC_AI_SCOPE
_AI_SPAN_PREFIX = semconv.AI_SPAN_PREFIX
_OPERATION = semconv.GEN_AI_OPERATION_NAME
_read_genai = GENAI.read
_READ_TOOL = read_tool
_tool_execution = tool_execution
_READ_MODEL = read_model
_model_values = model_values
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
_OTHER_MARKERS = _PYDANTIC_AI_MARKERS | {
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
