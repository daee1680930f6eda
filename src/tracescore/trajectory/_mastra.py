"""Mastra's OTel exporter: GenAI spans plus `mastra.span.type` and the agent run's input/output.

Tool calls (`TOOL_CALL`, `MCP_TOOL_CALL`) have no call id (a TODO in Mastra's source), so they
join requests by name and order; errors are `error.type` (Mastra's error id) and
`error.message`. Agent runs keep input and output in `mastra.agent_run.input|output` and list
tool names (not definitions) in `gen_ai.tool.definitions`. Source: conventions.md §6.
"""

from __future__ import annotations

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory._genai import NAME as GENAI_NAME
from tracescore.trajectory._genai import cut, read_agent, read_model
from tracescore.trajectory._genai_tool import read_tool
from tracescore.trajectory._messages import input_text, output_text
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import as_text
from tracescore.trajectory._views import Convention, SpanView

__all__ = ["MASTRA"]

NAME = "mastra"


def read(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """A Mastra view of `span`, or None without `mastra.span.type`."""
    attrs = span.attributes
    span_type = as_text(attrs.get(semconv.MASTRA_SPAN_TYPE))
    if span_type is None:
        return None
    span_type = span_type.strip().lower()
    if span_type in semconv.MASTRA_TOOL_TYPES:
        return read_tool(span, options, NAME)
    if span_type in semconv.MASTRA_MODEL_TYPES:
        return read_model(span, options, NAME)
    if span_type in semconv.MASTRA_AGENT_TYPES:
        view = read_agent(span, options, NAME)
        limit = options.max_value_chars
        raw_input = attrs.get(semconv.MASTRA_AGENT_RUN_INPUT)
        raw_output = attrs.get(semconv.MASTRA_AGENT_RUN_OUTPUT)
        if raw_input is not None:
            view.input = cut(input_text(raw_input), limit) or view.input
        if raw_output is not None:
            view.output = cut(output_text(raw_output), limit) or view.output
        return view
    return SpanView("other", NAME)


MASTRA = Convention(
    name=NAME,
    keys=frozenset(
        {
            semconv.MASTRA_SPAN_TYPE,
            semconv.MASTRA_AGENT_RUN_INPUT,
            semconv.MASTRA_AGENT_RUN_OUTPUT,
        }
    ),
    prefixes=(),
    read=read,
    extends=(GENAI_NAME,),
)
