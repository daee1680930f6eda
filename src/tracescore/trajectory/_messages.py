"""The GenAI message JSON (`gen_ai.input.messages` / `gen_ai.output.messages`) and tool lists.

Schema: semantic-conventions-genai `gen-ai-output-messages.json` (conventions.md §1.5). Real
producers differ from it, so: `response` and `result` are both accepted for a tool response,
ids are stripped, `arguments` may be an object or a JSON string, tool results may come back in a
`user` message (pydantic-ai up to v5) or a `tool` message, and older producers write
`{"role", "content": "text"}` instead of parts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tracescore import semconv
from tracescore.trajectory._values import (
    JSON_STARTS,
    PLAIN_SCAN,
    as_text,
    clean_id,
    clean_text,
    parse_json,
    parse_lenient,
)
from tracescore.trajectory._views import MISSING, Response, ToolRequest

__all__ = [
    "ERROR_RESULT_NEEDLES",
    "calls_since_user",
    "first_user_text",
    "input_text",
    "last_assistant_text",
    "lenient",
    "make_response",
    "may_be_error_result",
    "output_text",
    "parse_messages",
    "response_flags",
    "tool_names",
    "tool_requests",
    "tool_responses",
]


def parse_messages(value: object) -> list[dict[str, Any]]:
    """The message list of an attribute (JSON string or structured); [] when it is not one."""
    if value is None:  # not recorded (content capture off): the common case, answered first
        return []
    if value.__class__ is str:  # parse_json's own path for text, calls fewer per span read
        # Most messages come without surrounding whitespace: scanned as they are, no strip
        # call (`load_document`, inlined). A document that ends where the text does has no
        # trailing whitespace, so that is what its stripped text parses to; any other outcome
        # (None also for a document `null`) is decided on the stripped text by `parse_json`.
        parsed = None
        if value and value[0] in JSON_STARTS:
            try:
                parsed, end = PLAIN_SCAN(value, 0)
            except (StopIteration, ValueError, RecursionError):
                pass
            else:
                if end != len(value):
                    parsed = None
        if parsed is None:
            parsed = parse_json(value)
        if parsed.__class__ is list:  # the usual shape, just parsed: kept, not copied
            for message in parsed:
                if message.__class__ is not dict and not isinstance(message, dict):
                    break  # filtered below
            else:
                return parsed
    else:
        parsed = parse_json(value)
    if isinstance(parsed, dict):
        # A single message, or pydantic-ai's {"messages": [...]} wrappers seen in the wild.
        inner = parsed.get("messages")
        parsed = inner if isinstance(inner, list) else [parsed]
    if not isinstance(parsed, list):
        return []
    return [m for m in parsed if isinstance(m, dict)]


def _parts(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    parts = message.get(semconv.MSG_PARTS)
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict):
                yield part


def _text_of(message: dict[str, Any]) -> str | None:
    texts = [
        text
        for part in _parts(message)
        if part.get(semconv.PART_TYPE) == semconv.PART_TEXT
        and (text := as_text(part.get(semconv.PART_CONTENT))) is not None
    ]
    if texts:
        return "\n".join(texts)
    # Older producers: {"role": "user", "content": "..."}.
    return as_text(message.get(semconv.PART_CONTENT))


def first_user_text(messages: Iterable[dict[str, Any]]) -> str | None:
    """The first user message's text: the user input of a run."""
    for message in messages:
        if message.get(semconv.MSG_ROLE) == semconv.MSG_ROLE_USER:
            text = _text_of(message)
            if text:
                return text
    return None


def last_assistant_text(messages: list[dict[str, Any]]) -> str | None:
    """The last assistant (or role-less) message with text: the final answer."""
    for message in reversed(messages):
        role = message.get(semconv.MSG_ROLE)
        if role in (semconv.MSG_ROLE_ASSISTANT, None):
            text = _text_of(message)
            if text:
                return text
    return None


def tool_requests(messages: Iterable[dict[str, Any]]) -> tuple[ToolRequest, ...]:
    """`tool_call` parts in message order (the order the model asked for them)."""
    out: list[ToolRequest] = []
    for message in messages:
        for part in _parts(message):
            if part.get(semconv.PART_TYPE) != semconv.PART_TOOL_CALL:
                continue
            name = as_text(part.get(semconv.PART_NAME))
            if not name:
                continue
            arguments = part.get(semconv.PART_ARGUMENTS, MISSING)
            out.append(ToolRequest(name, clean_id(part.get(semconv.PART_ID)), arguments))
    return tuple(out)


def make_response(payload: object) -> Response:
    """A tool response, flagged when it is a denial (Vercel) or an MCP `isError` result."""
    structured = parse_json(payload)
    denied, is_error = response_flags(structured)
    return Response(payload, denied=denied, is_error=is_error)


# Without a backslash, JSON spells every key and string literally, so a result that
# `response_flags` calls failed holds `isError` or an error type, and all of those contain
# "rror" (tests/trajectory/test_messages.py checks it): two quick searches, not a parse.
ERROR_RESULT_NEEDLES = ("\\", "rror")


def may_be_error_result(text: str) -> bool:
    """False when the JSON text `text` cannot parse to a failed (MCP `isError`) result."""
    return ERROR_RESULT_NEEDLES[0] in text or ERROR_RESULT_NEEDLES[1] in text


def response_flags(structured: object) -> tuple[bool, bool]:
    """(denied, failed) of an already parsed tool response or result."""
    denied = False
    is_error = False
    if isinstance(structured, dict):
        kind = structured.get(semconv.PART_TYPE)
        denied = structured.get(semconv.RESPONSE_DENIED) is True or (
            kind == semconv.RESPONSE_EXECUTION_DENIED
        )
        # A `type` of any JSON value may come from traffic: a list or an object is no type
        # (and could not be looked up in a set).
        is_error = structured.get(semconv.MCP_IS_ERROR) is True or (
            isinstance(kind, str) and kind in semconv.RESPONSE_ERROR_TYPES
        )
    return denied, is_error


def tool_responses(messages: Iterable[dict[str, Any]]) -> dict[str, Response]:
    """`tool_call_response` parts by call id (the first response for an id wins)."""
    out: dict[str, Response] = {}
    for message in messages:
        for part in _parts(message):
            if part.get(semconv.PART_TYPE) != semconv.PART_TOOL_CALL_RESPONSE:
                continue
            call_id = clean_id(part.get(semconv.PART_ID))
            if call_id is None or call_id in out:
                continue
            if semconv.PART_RESPONSE in part:
                payload = part[semconv.PART_RESPONSE]
            else:
                payload = part.get(semconv.PART_RESULT)
            out[call_id] = make_response(payload)
    return out


def calls_since_user(
    messages: list[dict[str, Any]],
) -> tuple[tuple[ToolRequest, Response | None], ...]:
    """The `tool_call` parts after the last user message, each with its response, if any.

    In a run resumed after an approval, these are the earlier run's calls and what the user's
    decision made of them (`SpanView.history`).
    """
    start = 0
    for index, message in enumerate(messages):
        if message.get(semconv.MSG_ROLE) == semconv.MSG_ROLE_USER:
            start = index + 1
    recent = messages[start:]
    responses = tool_responses(recent)
    return tuple(
        (request, responses.get(request.call_id) if request.call_id else None)
        for request in tool_requests(recent)
    )


def tool_names(value: object) -> tuple[str, ...]:
    """Tool names from a definitions list: flat, nested OpenAI `{"function": {...}}`, or names.

    Also accepts an OTLP array of JSON strings (Vercel `ai.prompt.tools`, OpenInference
    `llm.tools.<i>.tool.json_schema` collected in order).
    """
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        parsed = [parsed]
    if not isinstance(parsed, list):
        return ()
    names: list[str] = []
    for item in parsed:
        name = _tool_name(item)
        if name and name not in names:
            names.append(name)
    return tuple(names)


def _tool_name(item: object) -> str | None:
    if isinstance(item, str):
        structured = parse_json(item)
        if structured is None:
            return clean_text(item).strip() or None
        item = structured
    if not isinstance(item, dict):
        return None
    function = item.get(semconv.TOOL_DEF_FUNCTION)
    if isinstance(function, dict):
        name = as_text(function.get(semconv.TOOL_DEF_NAME))
        if name:
            return name
    return as_text(item.get(semconv.TOOL_DEF_NAME))


def lenient(value: object, limit: int) -> Any:
    """Arguments or a result, parsed leniently; MISSING stays MISSING."""
    if value is MISSING:
        return MISSING
    return parse_lenient(value, limit)


def input_text(value: object) -> str | None:
    """User input from a generic input value: messages, `{"prompt": ...}`, or plain text."""
    return _value_text(value, user=True)


def output_text(value: object) -> str | None:
    """A final answer from a generic output value: messages, `{"text": ...}`, or plain text."""
    return _value_text(value, user=False)


_TEXT_KEYS = ("text", "content", "output", "prompt", "input", "result", "message")


def _value_text(value: object, *, user: bool) -> str | None:
    text = as_text(value)
    structured = parse_json(value)
    if isinstance(structured, list) or (
        isinstance(structured, dict) and isinstance(structured.get("messages"), list)
    ):
        messages = parse_messages(structured)
        found = first_user_text(messages) if user else last_assistant_text(messages)
        if found:
            return found
    if isinstance(structured, dict):
        for key in _TEXT_KEYS:
            inner = as_text(structured.get(key))
            if inner:
                return inner
    if isinstance(structured, str):
        return structured
    return text or None
