"""OpenLLMetry's legacy flattened chat spans (traceloop-sdk 0.40.x OpenAI instrumentation).

These spans (`openai.chat`) carry `llm.request.type = chat` instead of `gen_ai.operation.name`,
and flatten the exchange into indexed keys: `gen_ai.prompt.<i>.{role,content,tool_call_id}`,
`gen_ai.completion.<i>.{role,content,finish_reason}`, requested calls as
`gen_ai.completion.<i>.tool_calls.<k>.{id,name,arguments}`, and the offered tools as
`llm.request.functions.<i>.name`. Read as a model call whose requests carry call ids, so the
decorated `@tool` spans (which have none) join them by name and order, and a requested call
that never ran is found. A span that also has GenAI keys is read by the GenAI reader first;
this view then only fills its gaps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracescore import semconv
from tracescore.model.span import AttrValue, SpanRecord
from tracescore.trajectory._common import indexed
from tracescore.trajectory._genai import cut
from tracescore.trajectory._messages import make_response
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import as_text, clean_id, first_int
from tracescore.trajectory._views import MISSING, Response, SpanView, ToolRequest

__all__ = ["KEYS", "PREFIXES", "read_chat"]

NAME = "traceloop"

KEYS = frozenset(
    {
        semconv.LLM_REQUEST_TYPE,
        semconv.GEN_AI_REQUEST_MODEL,
        semconv.GEN_AI_RESPONSE_MODEL,
        semconv.GEN_AI_USAGE_PROMPT_TOKENS,
        semconv.GEN_AI_USAGE_COMPLETION_TOKENS,
        semconv.GEN_AI_USAGE_INPUT_TOKENS,
        semconv.GEN_AI_USAGE_OUTPUT_TOKENS,
        semconv.LLM_USAGE_PROMPT_TOKENS,
        semconv.LLM_USAGE_COMPLETION_TOKENS,
    }
)
PREFIXES = (semconv.LLM_PROMPTS, semconv.LLM_COMPLETIONS, semconv.LLM_REQUEST_FUNCTIONS)


def read_chat(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """A model-call view of a legacy chat span, or None without `llm.request.type`."""
    attrs = span.attributes
    request_type = as_text(attrs.get(semconv.LLM_REQUEST_TYPE))
    if request_type is None:
        return None
    if request_type not in semconv.LLM_MODEL_REQUEST_TYPES:
        return SpanView("other", NAME)  # embedding, rerank: not steps of a trajectory
    limit = options.max_value_chars
    completions = indexed(attrs, semconv.LLM_COMPLETIONS)
    requests: list[ToolRequest] = []
    for message in completions:
        requests.extend(_requests(message))
    answer = None
    for message in reversed(completions):
        if as_text(message.get(semconv.LLM_MSG_ROLE)) in (semconv.MSG_ROLE_ASSISTANT, None):
            answer = as_text(message.get(semconv.LLM_MSG_CONTENT))
            if answer:
                break
    view = SpanView(
        "model",
        NAME,
        model=as_text(attrs.get(semconv.GEN_AI_RESPONSE_MODEL))
        or as_text(attrs.get(semconv.GEN_AI_REQUEST_MODEL)),
        input_tokens=first_int(
            attrs,
            semconv.GEN_AI_USAGE_PROMPT_TOKENS,
            semconv.LLM_USAGE_PROMPT_TOKENS,
            semconv.GEN_AI_USAGE_INPUT_TOKENS,
        ),
        output_tokens=first_int(
            attrs,
            semconv.GEN_AI_USAGE_COMPLETION_TOKENS,
            semconv.LLM_USAGE_COMPLETION_TOKENS,
            semconv.GEN_AI_USAGE_OUTPUT_TOKENS,
        ),
        # No completions recorded (content capture off) is "unknown", not "requested nothing".
        requests=tuple(requests) if completions else None,
        output=cut(answer or None, limit),
    )
    functions = indexed(attrs, semconv.LLM_REQUEST_FUNCTIONS)
    if functions:
        names: list[str] = []
        for function in functions:
            name = as_text(function.get(semconv.LLM_FUNCTION_NAME))
            if name and name not in names:
                names.append(name)
        view.tools = tuple(names)
    # The prompt is the whole history on every call: parsed only when something needs it.
    view.input = lambda: cut(_first_user(attrs), limit)
    view.responses = lambda: _responses(attrs)
    return view


def _requests(message: dict[str, AttrValue]) -> list[ToolRequest]:
    out: list[ToolRequest] = []
    for call in indexed(message, semconv.LLM_MSG_TOOL_CALLS):
        name = as_text(call.get(semconv.LLM_TOOL_CALL_NAME))
        if not name:
            continue
        arguments: Any = call.get(semconv.LLM_TOOL_CALL_ARGUMENTS, MISSING)
        out.append(ToolRequest(name, clean_id(call.get(semconv.LLM_TOOL_CALL_ID)), arguments))
    return out


def _first_user(attrs: Mapping[str, AttrValue]) -> str | None:
    for message in indexed(attrs, semconv.LLM_PROMPTS):
        if as_text(message.get(semconv.LLM_MSG_ROLE)) == semconv.MSG_ROLE_USER:
            text = as_text(message.get(semconv.LLM_MSG_CONTENT))
            if text:
                return text
    return None


def _responses(attrs: Mapping[str, AttrValue]) -> dict[str, Response]:
    """Tool results sent back to the model (`role = tool` prompts), by call id."""
    out: dict[str, Response] = {}
    for message in indexed(attrs, semconv.LLM_PROMPTS):
        call_id = clean_id(message.get(semconv.LLM_MSG_TOOL_CALL_ID))
        if call_id and call_id not in out:
            out[call_id] = make_response(message.get(semconv.LLM_MSG_CONTENT))
    return out
