"""The native reader of plain GenAI `execute_tool`, model and `invoke_agent` spans, when the
extension is built.

`read_plain_genai(span, max_value_chars)` (src/tracescore/otlp/_genai.c) returns exactly the
view `classify` returns for the simplest, most common shapes of those spans (no other
convention's marker, no exception event on tools (failed calls by status or `error.type` are
read), plain ASCII names and error texts, JSON text arguments and results, integer
token counts, no messages or tool definitions), None (as `classify`) for a span with no marker
and no GenAI operation or span name (an HTTP span), and `FALLBACK` for every other span, which
`classify` then reads in Python. Classifying a span in Python was 42% of building a run; the
tests compare both on every fixture span, the benchmark's spans and generated attribute dicts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanRecord, StatusCode
from tracescore.model.trajectory import Deferred, ModelCall, ToolCall, Trajectory
from tracescore.otlp.native import extension
from tracescore.trajectory._genai import NAME
from tracescore.trajectory._messages import ERROR_RESULT_NEEDLES
from tracescore.trajectory._tree import MAX_OTLP_KIND
from tracescore.trajectory._values import parse_lenient
from tracescore.trajectory._views import SpanView

__all__ = ["FALLBACK", "FlatRun", "bind"]

FALLBACK: Any = object()
"""What `read_plain_genai` answers for a span it does not handle: ask the Python reader."""

# The keys in the order _genai.c reads them (its K_* enum).
_KEYS = (
    semconv.GEN_AI_OPERATION_NAME,
    semconv.GEN_AI_TOOL_NAME,
    semconv.GEN_AI_TOOL_CALL_ID,
    semconv.GEN_AI_TOOL_CALL_ARGUMENTS,
    semconv.GEN_AI_TOOL_CALL_RESULT,
    semconv.ERROR_TYPE,
    semconv.GEN_AI_INPUT_MESSAGES,
    semconv.GEN_AI_OUTPUT_MESSAGES,
    semconv.GEN_AI_TOOL_DEFINITIONS,
    semconv.GEN_AI_USAGE_INPUT_TOKENS,
    semconv.GEN_AI_USAGE_OUTPUT_TOKENS,
    semconv.GEN_AI_USAGE_PROMPT_TOKENS,
    semconv.GEN_AI_USAGE_COMPLETION_TOKENS,
    semconv.GEN_AI_RESPONSE_MODEL,
    semconv.GEN_AI_REQUEST_MODEL,
    semconv.ERROR_MESSAGE,
    semconv.GEN_AI_AGENT_NAME,
)


FlatRun = Callable[[list[SpanRecord], int, tuple[str, ...], bool], Any]
"""`flat_run(spans, max_value_chars, output_tool_names, include_output_tools)`: the trajectory
of a trace's spans, in any order, that are a flat run whose every span is read natively, as
`run_trajectory` makes it; FALLBACK for any other (see `_flat`)."""


def bind(
    other_markers: frozenset[str], genai_name_prefixes: tuple[str, ...]
) -> tuple[Callable[[SpanRecord, int], SpanView | None], FlatRun] | None:
    """`read_plain_genai` bound to `other_markers`, the marker keys of every convention but
    GenAI (a span carrying one is not plain), and `genai_name_prefixes`, the span names GenAI
    reads without an operation, with `flat_run`; None where the extension was not built."""
    _scan = extension()
    if _scan is None:
        return None
    # Views and steps are made without running __init__: the extension checks the fields are
    # these slots, and takes each view field's default from here.
    fields = dataclasses.fields(SpanView)
    if hasattr(SpanView, "__post_init__") or any(
        f.default_factory is not dataclasses.MISSING for f in fields
    ):
        raise TypeError("SpanView must be built by its fields' plain defaults alone")
    if hasattr(ToolCall, "__post_init__") or hasattr(ModelCall, "__post_init__"):
        raise TypeError("ToolCall and ModelCall must be built by their fields alone")
    defaults = tuple(None if f.default is dataclasses.MISSING else f.default for f in fields)
    flat_run: FlatRun = _scan.bind_genai(
        SpanRecord,
        SpanView,
        tuple(f.name for f in fields),
        defaults,
        _KEYS,
        tuple(sorted(semconv.MODEL_OPERATIONS)),
        semconv.OP_EXECUTE_TOOL,
        semconv.OP_INVOKE_AGENT,
        ("tool", "model", "agent"),
        NAME,
        (StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR),
        Deferred,
        parse_lenient,
        ERROR_RESULT_NEEDLES,
        FALLBACK,
        other_markers,
        semconv.PYDANTIC_AI_SCOPE,
        semconv.AI_SPAN_PREFIX,
        genai_name_prefixes,
        (ToolCall, _slots(ToolCall), ModelCall, _slots(ModelCall), "ok", "error", MAX_OTLP_KIND),
    )
    if hasattr(Trajectory, "__post_init__"):
        raise TypeError("Trajectory must be built by its fields alone")
    _scan.bind_flat(Trajectory, tuple(f.name for f in dataclasses.fields(Trajectory)), SpanRecord)
    reader: Callable[[SpanRecord, int], SpanView | None] = _scan.read_plain_genai
    return reader, flat_run


def _slots(cls: type) -> tuple[Any, ...]:
    """The slot descriptors of the dataclass `cls`'s fields, in order: a field read through
    a property (ToolCall's arguments and result, computed on read) is the slot its setter
    writes (`_computed_on_read` keeps the slot's own `__set__`)."""
    out = []
    for field in dataclasses.fields(cls):
        slot = cls.__dict__[field.name]
        if isinstance(slot, property):
            slot = getattr(slot.fset, "__self__", None)
        out.append(slot)
    return tuple(out)
