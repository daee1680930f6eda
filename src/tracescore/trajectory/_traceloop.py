"""OpenLLMetry / Traceloop: `traceloop.span.kind` tool / agent / workflow with entity values.

Decorated tools (`@tool`, span `{name}.tool`) have no call id; `traceloop.entity.input` is
`{"args": [...], "kwargs": {...}}` and `traceloop.entity.output` the JSON result. Framework
instrumentations (LangChain, OpenAI Agents) also set GenAI keys; those spans are read by the
GenAI reader first and this reader only fills what it left out (e.g. arguments).
Instrumentation spans without a kind (`openai.chat` of traceloop-sdk 0.40.x) are the legacy
flattened chat spans read by `_traceloop_chat`.
Source: conventions.md §4 and the §8 table.
"""

from __future__ import annotations

from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory._common import error_info
from tracescore.trajectory._genai import cut
from tracescore.trajectory._messages import input_text, output_text
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._traceloop_chat import KEYS as CHAT_KEYS
from tracescore.trajectory._traceloop_chat import PREFIXES as CHAT_PREFIXES
from tracescore.trajectory._traceloop_chat import read_chat
from tracescore.trajectory._values import as_text, parse_lenient
from tracescore.trajectory._views import Convention, SpanView

__all__ = ["TRACELOOP"]

NAME = "traceloop"
_TOOL_SUFFIX = "." + semconv.TRACELOOP_KIND_TOOL


def read(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """A Traceloop view of `span`: a decorated entity, else a legacy chat span, else None."""
    attrs = span.attributes
    kind = as_text(attrs.get(semconv.TRACELOOP_SPAN_KIND))
    if kind is None:
        return read_chat(span, options)
    limit = options.max_value_chars
    entity = as_text(attrs.get(semconv.TRACELOOP_ENTITY_NAME))
    raw_input = attrs.get(semconv.TRACELOOP_ENTITY_INPUT)
    raw_output = attrs.get(semconv.TRACELOOP_ENTITY_OUTPUT)
    if kind == semconv.TRACELOOP_KIND_TOOL:
        failed, error_type, message = error_info(span)
        name = entity or as_text(attrs.get(semconv.GEN_AI_TOOL_NAME))
        if not name and span.name.endswith(_TOOL_SUFFIX):
            name = span.name[: -len(_TOOL_SUFFIX)] or None
        view = SpanView(
            "tool",
            NAME,
            tool_name=name or span.name or None,
            error=failed,
            error_type=error_type,
            error_message=message,
        )
        if raw_input is not None:
            view.arguments = _arguments(parse_lenient(raw_input, limit))
        if raw_output is not None:
            view.result = parse_lenient(raw_output, limit)
        return view
    return SpanView(
        "agent" if kind == semconv.TRACELOOP_KIND_AGENT else "other",
        NAME,
        agent_name=entity,
        input=cut(_entity_text(raw_input), limit),
        output=cut(output_text(raw_output), limit),
    )


def _arguments(value: Any) -> Any:
    """The call's keyword arguments when it had no positional ones, else both as given."""
    if isinstance(value, dict) and set(value) <= {semconv.TRACELOOP_ARGS, semconv.TRACELOOP_KWARGS}:
        args = value.get(semconv.TRACELOOP_ARGS) or []
        kwargs = value.get(semconv.TRACELOOP_KWARGS) or {}
        if not args:
            return kwargs
    return value


def _entity_text(raw: object) -> str | None:
    value = parse_lenient(raw, 1 << 30) if raw is not None else None
    if isinstance(value, dict) and set(value) <= {semconv.TRACELOOP_ARGS, semconv.TRACELOOP_KWARGS}:
        args = value.get(semconv.TRACELOOP_ARGS) or []
        kwargs = value.get(semconv.TRACELOOP_KWARGS) or {}
        for candidate in [*args, *kwargs.values()]:
            text = input_text(candidate) if not isinstance(candidate, str) else candidate
            if text:
                return text
        return None
    return input_text(raw)


TRACELOOP = Convention(
    name=NAME,
    keys=frozenset(
        {
            semconv.TRACELOOP_SPAN_KIND,
            semconv.TRACELOOP_ENTITY_NAME,
            semconv.TRACELOOP_ENTITY_INPUT,
            semconv.TRACELOOP_ENTITY_OUTPUT,
            semconv.GEN_AI_TOOL_NAME,
        }
    )
    | CHAT_KEYS,
    prefixes=CHAT_PREFIXES,
    read=read,
)
