"""OTel GenAI semantic conventions: `execute_tool`, `invoke_agent` and inference (`chat`) spans.

Also read as-is: the GenAI spans of Vercel's `@ai-sdk/otel`, Microsoft Agent Framework, MCP
tool spans (`error.type = tool_error`, or an `isError` result) and OpenLLMetry framework spans.
Source: conventions.md §1 and the §8 table.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import starmap

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory._common import name_suffix
from tracescore.trajectory._genai_tool import read_tool
from tracescore.trajectory._messages import (
    calls_since_user,
    first_user_text,
    last_assistant_text,
    parse_messages,
    tool_names,
    tool_requests,
    tool_responses,
)
from tracescore.trajectory._model_output import answer_and_requests
from tracescore.trajectory._openai_agents import genai_handoff, openai_message_parts
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import as_int, as_text, truncate
from tracescore.trajectory._views import (
    MODEL_RAW_INPUTS,
    Convention,
    ModelInput,
    ModelValues,
    RequestValues,
    Response,
    SpanView,
    ToolRequest,
)

__all__ = [
    "GENAI",
    "MODEL_USAGE_KEYS",
    "READERS",
    "agent_name_of_agent_span",
    "cut",
    "model_responses",
    "model_values",
    "model_view",
    "read_agent",
    "read_model",
]

# What `read_model` takes a model call's model name and token counts from, and nothing else.
MODEL_USAGE_KEYS: frozenset[str] = frozenset(
    {
        semconv.GEN_AI_REQUEST_MODEL,
        semconv.GEN_AI_RESPONSE_MODEL,
        semconv.GEN_AI_USAGE_INPUT_TOKENS,
        semconv.GEN_AI_USAGE_OUTPUT_TOKENS,
        semconv.GEN_AI_USAGE_PROMPT_TOKENS,
        semconv.GEN_AI_USAGE_COMPLETION_TOKENS,
    }
)

NAME = "genai"
# Names bound here: one lookup fewer each per span read (`model_values` runs per model span).
_USAGE_KEYS = MODEL_USAGE_KEYS
_INPUT_MESSAGES = semconv.GEN_AI_INPUT_MESSAGES
_USAGE_INPUT_TOKENS = semconv.GEN_AI_USAGE_INPUT_TOKENS
_USAGE_PROMPT_TOKENS = semconv.GEN_AI_USAGE_PROMPT_TOKENS
_USAGE_OUTPUT_TOKENS = semconv.GEN_AI_USAGE_OUTPUT_TOKENS
_USAGE_COMPLETION_TOKENS = semconv.GEN_AI_USAGE_COMPLETION_TOKENS
_RESPONSE_MODEL = semconv.GEN_AI_RESPONSE_MODEL
_REQUEST_MODEL = semconv.GEN_AI_REQUEST_MODEL
_OUTPUT_MESSAGES = semconv.GEN_AI_OUTPUT_MESSAGES
_TOOL_DEFINITIONS = semconv.GEN_AI_TOOL_DEFINITIONS


def _operation_from_name(name: str) -> str | None:
    # The attribute is Required, but a span name is all some older producers leave.
    if name.startswith(semconv.OP_EXECUTE_TOOL + " "):
        return semconv.OP_EXECUTE_TOOL
    if name == semconv.OP_INVOKE_AGENT or name.startswith(semconv.OP_INVOKE_AGENT + " "):
        return semconv.OP_INVOKE_AGENT
    return None


def read(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """A GenAI view of `span`, or None when it carries no GenAI operation."""
    op = span.attributes.get(semconv.GEN_AI_OPERATION_NAME)
    if op.__class__ is not str:  # text is used as it is: readers are keyed by ASCII names
        op = as_text(op)
    if not op:
        op = _operation_from_name(span.name)
        if op is None:
            return None
    reader = _READERS.get(op)
    if reader is not None:
        return reader(span, options, NAME)
    # create_agent, invoke_workflow, embeddings, ...: not steps of a trajectory.
    return SpanView("other", NAME)


def agent_name_of_agent_span(span: SpanRecord) -> str | None:
    """The agent name `read_agent` gives an `invoke_agent` span (None: unnamed)."""
    attrs = span.attributes
    return (
        as_text(attrs.get(semconv.GEN_AI_AGENT_NAME))
        or name_suffix(span.name, semconv.OP_INVOKE_AGENT)
        or as_text(attrs.get(semconv.GEN_AI_AGENT_ID))
    )


def read_agent(span: SpanRecord, options: BuildOptions, convention: str) -> SpanView:
    """An `invoke_agent` span: who ran, what was asked, what was answered."""
    attrs = span.attributes
    limit = options.max_value_chars
    # Most agent spans record no messages (content capture off): then no reader is called
    # (what they answer for None), and the view is built by position, as a model span's
    # (the two, ~4,000 instructions a run, 1% of a flat run's build).
    raw = attrs.get(semconv.GEN_AI_INPUT_MESSAGES)
    inputs = parse_messages(raw) if raw is not None else []
    raw = attrs.get(semconv.GEN_AI_OUTPUT_MESSAGES)
    outputs = openai_message_parts(parse_messages(raw)) if raw is not None else []
    # Role, convention; tool name, call id, error, error type, error message; model, input
    # and output tokens, output; agent name.
    name = agent_name_of_agent_span(span)
    view = SpanView("agent", convention, None, None, None, None, None, None, None, None, None, name)
    if inputs:
        view.input = cut(first_user_text(inputs), limit)
    if outputs:
        view.output = cut(last_assistant_text(outputs), limit)
    if semconv.GEN_AI_TOOL_DEFINITIONS in attrs:
        view.tools = tool_names(attrs[semconv.GEN_AI_TOOL_DEFINITIONS])
    # Requests and responses recorded on the agent span are a fallback for runs whose model
    # spans are missing (Microsoft Agent Framework writes the whole exchange here).
    if inputs or outputs:
        everything = inputs + outputs
        view.requests = tool_requests(everything)
        view.responses = lambda: tool_responses(everything)
    return view


def read_model(span: SpanRecord, options: BuildOptions, convention: str) -> SpanView:
    """An inference span: tokens, the calls the model requested, and (lazily) the responses."""
    return model_view(model_values(span, options), convention, options)


def model_values(span: SpanRecord, options: BuildOptions) -> ModelValues:
    """What an inference span says of its call: `read_model`'s view, as `ModelValues` (the
    flat-run fast path builds the model call from these, and a view only when it needs one)."""
    attrs = span.attributes
    limit = options.max_value_chars
    raw_inputs = attrs.get(_INPUT_MESSAGES)
    # Exact ints and ASCII text are read as they are, an absent key (None) as None; anything
    # else through as_int / as_text (calls saved on the common path, which runs for every
    # model span). A span with none of the usage keys (a service that reads no usage decodes
    # none of them) skips their six lookups in one set test.
    if not _USAGE_KEYS.isdisjoint(attrs):
        input_tokens = attrs.get(_USAGE_INPUT_TOKENS)
        if input_tokens.__class__ is not int:
            if input_tokens is not None:
                input_tokens = as_int(input_tokens)
            if input_tokens is None:
                input_tokens = attrs.get(_USAGE_PROMPT_TOKENS)
                if input_tokens is not None and input_tokens.__class__ is not int:
                    input_tokens = as_int(input_tokens)
        output_tokens = attrs.get(_USAGE_OUTPUT_TOKENS)
        if output_tokens.__class__ is not int:
            if output_tokens is not None:
                output_tokens = as_int(output_tokens)
            if output_tokens is None:
                output_tokens = attrs.get(_USAGE_COMPLETION_TOKENS)
                if output_tokens is not None and output_tokens.__class__ is not int:
                    output_tokens = as_int(output_tokens)
        model = attrs.get(_RESPONSE_MODEL)
        if model.__class__ is not str or not model.isascii():
            model = as_text(model) if model is not None else None
        if not model:
            model = attrs.get(_REQUEST_MODEL)
            if model is not None:
                model = as_text(model)
    else:
        input_tokens = output_tokens = model = None
    output: str | None = None
    requests: tuple[RequestValues, ...] | None = None
    if _OUTPUT_MESSAGES in attrs:
        messages = parse_messages(attrs[_OUTPUT_MESSAGES])
        if messages:
            text, requests = answer_and_requests(messages)
            if text is not None:  # (most answers that ask for tools have no text)
                output = cut(text, limit)
        else:
            requests = ()
    tools = None
    if _TOOL_DEFINITIONS in attrs:
        tools = tool_names(attrs[_TOOL_DEFINITIONS])
    return (model, input_tokens, output_tokens, output, requests, tools, raw_inputs)


def model_view(values: ModelValues, convention: str, options: BuildOptions) -> SpanView:
    """The view of an inference span that said `values` (`model_values`)."""
    model, input_tokens, output_tokens, output, requests, tools, raw_inputs = values
    view = SpanView(
        "model",
        convention,
        None,  # tool name, call id, error, error type, error message
        None,
        None,
        None,
        None,
        model,
        input_tokens,
        output_tokens,
        output,
    )
    if requests is not None:
        view.requests = tuple(starmap(ToolRequest, requests))
    if tools is not None:
        view.tools = tools
    if raw_inputs is not None:
        limit = options.max_value_chars
        view.input = lambda: cut(first_user_text(parse_messages(raw_inputs)), limit)
        view.responses = model_responses(values, options)
    return view


def model_responses(values: ModelValues, options: BuildOptions) -> ModelInput | None:
    """The responses an inference span that said `values` recorded in its input, read when
    asked (a view's `responses`), or None when it recorded no input."""
    raw_inputs = values[MODEL_RAW_INPUTS]
    if raw_inputs is None:
        return None
    return ModelInput(raw_inputs, _responses, _calls_since_user, options)


def _responses(raw: object) -> dict[str, Response]:
    return tool_responses(parse_messages(raw))


def _calls_since_user(raw: object) -> tuple[tuple[ToolRequest, Response | None], ...]:
    return calls_since_user(parse_messages(raw))


def read_handoff(span: SpanRecord, options: BuildOptions, convention: str) -> SpanView:
    """An `agent_handoff` span (openai-agents-v2): control passed to another agent."""
    return genai_handoff(span, convention)


_READERS: dict[str, Callable[[SpanRecord, BuildOptions, str], SpanView]] = {
    semconv.OP_EXECUTE_TOOL: read_tool,
    semconv.OP_AGENT_HANDOFF: read_handoff,
    semconv.OP_INVOKE_AGENT: read_agent,
    **dict.fromkeys(semconv.MODEL_OPERATIONS, read_model),
}
READERS = _READERS
"""The reader of each GenAI operation (a view of that role); `_classify` dispatches by it too."""


def cut(text: str | None, limit: int) -> str | None:
    """Input or output text, cut to the limit."""
    return truncate(text, limit) if text is not None else None


GENAI = Convention(
    name=NAME,
    keys=frozenset(
        {
            semconv.GEN_AI_OPERATION_NAME,
            semconv.GEN_AI_AGENT_NAME,
            semconv.GEN_AI_AGENT_ID,
            semconv.GEN_AI_INPUT_MESSAGES,
            semconv.GEN_AI_OUTPUT_MESSAGES,
            semconv.GEN_AI_TOOL_DEFINITIONS,
            semconv.GEN_AI_TOOL_NAME,
            semconv.GEN_AI_TOOL_CALL_ID,
            semconv.GEN_AI_TOOL_CALL_ARGUMENTS,
            semconv.GEN_AI_TOOL_CALL_RESULT,
            semconv.ERROR_TYPE,
            semconv.ERROR_MESSAGE,
            semconv.GEN_AI_HANDOFF_TO_AGENT,
        }
    )
    | MODEL_USAGE_KEYS,
    prefixes=(),
    read=read,
    clean=True,
)
