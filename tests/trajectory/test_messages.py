"""The GenAI message JSON and tool definition shapes real producers send."""

from __future__ import annotations

import json

import pytest

from tracescore import semconv
from tracescore.trajectory._messages import (
    first_user_text,
    input_text,
    last_assistant_text,
    may_be_error_result,
    output_text,
    parse_messages,
    response_flags,
    tool_names,
    tool_requests,
    tool_responses,
)

FLAT = [
    {"type": "function", "name": "a", "description": "", "parameters": {}},
    {"type": "function", "name": "b"},
]
NESTED = [
    {"type": "function", "function": {"name": "a", "parameters": {}}},
    {"type": "function", "function": {"name": "b"}},
]


@pytest.mark.parametrize(
    "definitions",
    [
        json.dumps(FLAT),
        json.dumps(NESTED),
        json.dumps(["a", "b"]),  # Mastra: a list of names
        tuple(json.dumps(d) for d in FLAT),  # Vercel ai.prompt.tools: an array of JSON strings
        ("a", "b", "a"),  # agno.tools: an array of names (duplicates once)
    ],
)
def test_tool_definitions_in_every_shape(definitions: object) -> None:
    assert tool_names(definitions) == ("a", "b")


def test_tool_names_of_garbage_is_empty() -> None:
    assert tool_names("not json") == ()
    assert tool_names(42) == ()


def test_requests_and_responses_accept_string_arguments_result_key_and_padded_ids() -> None:
    messages = parse_messages(
        json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "tool_call", "id": " c1 ", "name": "x", "arguments": '{"a": 1}'}
                    ],
                },
                {
                    "role": "user",
                    "parts": [{"type": "tool_call_response", "id": "c1 ", "result": "r"}],
                },
                {
                    "role": "tool",
                    "parts": [
                        {"type": "tool_call_response", "id": "c2", "response": {"denied": True}}
                    ],
                },
            ]
        )
    )
    (request,) = tool_requests(messages)
    assert (request.name, request.call_id, request.arguments) == ("x", "c1", '{"a": 1}')
    responses = tool_responses(messages)
    assert (responses["c1"].result, responses["c1"].denied) == ("r", False)
    assert responses["c2"].denied


def test_user_and_assistant_text_with_parts_or_plain_content() -> None:
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": "sys"}]},
        {"role": "user", "content": "question"},
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "one"}, {"type": "text", "content": "two"}],
        },
        {"role": "assistant", "parts": [{"type": "tool_call", "name": "x"}]},
    ]
    assert (first_user_text(messages), last_assistant_text(messages)) == ("question", "one\ntwo")


@pytest.mark.parametrize(
    ("value", "user", "answer"),
    [
        ('{"prompt": "hi"}', "hi", "hi"),
        ('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]', "hi", "yo"),
        ('{"text": "yo"}', "yo", "yo"),
        ("plain", "plain", "plain"),
        ('"quoted"', "quoted", "quoted"),
    ],
)
def test_generic_input_and_output_values(value: str, user: str, answer: str) -> None:
    assert (input_text(value), output_text(value)) == (user, answer)


@pytest.mark.parametrize(
    "failed",
    [
        {semconv.MCP_IS_ERROR: True},
        *({semconv.PART_TYPE: t} for t in sorted(semconv.RESPONSE_ERROR_TYPES)),
    ],
)
def test_text_of_every_failed_result_shape_may_be_an_error(failed: dict[str, object]) -> None:
    # The builder parses a result while building only when this says it may be a failure.
    assert response_flags(failed)[1]
    assert may_be_error_result(json.dumps(failed))
    assert may_be_error_result(json.dumps(failed).replace("r", "\\u0072"))
    assert not may_be_error_result(json.dumps({"query": "alpha", "rows": [1, 2]}))


@pytest.mark.parametrize("kind", [["error-text"], {"a": 1}, 3, None])
def test_a_response_type_that_is_not_text_is_neither_denied_nor_failed(kind: object) -> None:
    # Found by test_properties: a list there was looked up in a set and raised TypeError.
    assert response_flags({semconv.PART_TYPE: kind}) == (False, False)


_DOCUMENT = '[{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}]'


@pytest.mark.parametrize(
    "text",
    [
        _DOCUMENT,
        f"  {_DOCUMENT}",
        f"{_DOCUMENT}\n",
        f"\t{_DOCUMENT} \u3000",
        f"{_DOCUMENT} x",
        f"{_DOCUMENT}{_DOCUMENT}",
        _DOCUMENT[:-1],
        f"{_DOCUMENT[:-1]} ",
        '{"role": "user", "content": "q"} ',
        '"text"',
        "[1, 2]",
        "[",
        "",
        "   ",
        "x[]",
    ],
)
def test_messages_text_parses_as_its_stripped_text(text: str) -> None:
    # Text without surrounding whitespace is scanned as it is (no strip call): the same
    # messages as json.loads of the stripped text gives, whatever the text around it.
    try:
        expected = parse_messages(json.loads(text.strip()))
    except ValueError:
        expected = []
    assert parse_messages(text) == expected
