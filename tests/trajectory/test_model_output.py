"""The GenAI model reader's one-pass reads give what the general reads give.

`answer_and_requests` reads a model call's answer and requested calls in one pass over its
output messages; `read_model` reads token counts and the model name without a call for absent
keys. Both are compared with the readers they replace, on every recorded fixture span and on
generated messages and attribute values of every type a decoder can produce.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.trajectory import BuildOptions
from tracescore.trajectory._genai import read_model
from tracescore.trajectory._messages import last_assistant_text, parse_messages, tool_requests
from tracescore.trajectory._model_output import answer_and_requests
from tracescore.trajectory._openai_agents import openai_message_parts
from tracescore.trajectory._values import as_int, as_text
from tracescore.trajectory._views import request_values
from trajectory.corpora import fixture_span_files
from trajectory.spans import span

_REPR = (
    "{'content': 'Let me look.', 'refusal': None, 'role': 'assistant', 'tool_calls': [{'id': "
    "'call_r', 'type': 'function', 'function': {'name': 'lookup', 'arguments': '{}'}}]}"
)


def general(messages: list[dict[str, Any]]) -> tuple[str | None, tuple[Any, ...]]:
    """What `read_model` read before: the OpenAI repr rewritten, then the two general reads
    (the requests as their fields: `RequestValues`)."""
    outputs = openai_message_parts(messages)
    return last_assistant_text(outputs), request_values(tool_requests(outputs))


def _value(rng: random.Random) -> Any:
    return rng.choice(
        [None, "", "a", "Ünï", "\ud800x", b"by", 3, True, 2.5, [], {}, ("t",), " id ", "x" * 40]
    )


def _part(rng: random.Random) -> Any:
    kind = rng.choice(["text", "tool_call", "tool_call_response", "reasoning", None, 7, ["text"]])
    part: dict[str, Any] = {}
    if kind is not None:
        part["type"] = kind
    for key in ("content", "name", "id", "arguments", "response"):
        if rng.random() < 0.6:
            part[key] = _value(rng)
    if kind == "text" and rng.random() < 0.1:
        part["content"] = _REPR
    if kind == "tool_call" and rng.random() < 0.6:
        part["name"] = rng.choice(["lookup", "Ünï", " x "])
    return rng.choice([part, part, part, "not a part", None])


def _message(rng: random.Random) -> dict[str, Any]:
    message: dict[str, Any] = {}
    role = rng.choice(["assistant", "assistant", "user", "tool", "system", None, 3])
    if role is not None:
        message["role"] = role
    if rng.random() < 0.8:
        parts = [_part(rng) for _ in range(rng.randint(0, 4))]
        message["parts"] = rng.choice([parts, parts, tuple(parts), "parts"])
    if rng.random() < 0.3:
        message["content"] = _value(rng)
    return message


@pytest.mark.parametrize("seed", range(300))
def test_generated_messages_read_as_the_general_reads(seed: int) -> None:
    rng = random.Random(seed)
    messages = [_message(rng) for _ in range(rng.randint(1, 4))]
    assert answer_and_requests(messages) == general(messages)


def test_an_openai_repr_answer_is_read_through_the_rewrite() -> None:
    messages = [{"role": "assistant", "parts": [{"type": "text", "content": _REPR}]}]
    text, requests = answer_and_requests(messages)
    assert text == "Let me look."
    assert [(name, call_id) for name, call_id, _ in requests] == [("lookup", "call_r")]
    assert (text, requests) == general(messages)


def test_every_recorded_output_reads_as_the_general_reads() -> None:
    seen = 0
    for spans in fixture_span_files():
        for record in spans:
            for key in (semconv.GEN_AI_OUTPUT_MESSAGES, semconv.GEN_AI_INPUT_MESSAGES):
                messages = parse_messages(record.attributes.get(key))
                if messages:
                    seen += 1
                    assert answer_and_requests(messages) == general(messages)
    assert seen > 20


_COUNTS = [None, 7, 0, -3, True, False, 2.0, 2.5, "12", " 8 ", "x", b"9", 2**70, ("1",)]
_NAMES = [None, "gpt-4.1", "", "Ünï", "\ud800", b"m\xff", 3, ("m",)]
_KEYS = [
    (semconv.GEN_AI_USAGE_INPUT_TOKENS, semconv.GEN_AI_USAGE_PROMPT_TOKENS, "input_tokens"),
    (semconv.GEN_AI_USAGE_OUTPUT_TOKENS, semconv.GEN_AI_USAGE_COMPLETION_TOKENS, "output_tokens"),
]


def _chat(attrs: dict[str, Any]) -> SpanRecord:
    return span(2, "chat m", 1, attrs={semconv.GEN_AI_OPERATION_NAME: "chat", **attrs})


def _pairs(first: str, second: str, values: list[Any]) -> list[dict[str, Any]]:
    """Attributes with each value (or none) under each of the two keys."""
    return [
        {k: v for k, v in ((first, a), (second, b)) if v is not _ABSENT}
        for a in [*values, _ABSENT]
        for b in [*values, _ABSENT]
    ]


_ABSENT = object()


@pytest.mark.parametrize(("first", "second", "field"), _KEYS, ids=["input", "output"])
def test_token_counts_read_as_the_general_reads(first: str, second: str, field: str) -> None:
    for attrs in _pairs(first, second, _COUNTS):
        got = getattr(read_model(_chat(attrs), BuildOptions(), "genai"), field)
        expected = as_int(attrs.get(first))
        if expected is None:
            expected = as_int(attrs.get(second))
        assert (got, got.__class__) == (expected, expected.__class__), attrs


def test_the_model_name_reads_as_the_general_read() -> None:
    pairs = _pairs(semconv.GEN_AI_RESPONSE_MODEL, semconv.GEN_AI_REQUEST_MODEL, _NAMES)
    for attrs in pairs:
        view = read_model(_chat(attrs), BuildOptions(), "genai")
        expected = as_text(attrs.get(semconv.GEN_AI_RESPONSE_MODEL)) or as_text(
            attrs.get(semconv.GEN_AI_REQUEST_MODEL)
        )
        assert view.model == expected, attrs


def test_output_messages_recorded_empty_or_absent() -> None:
    options = BuildOptions()
    absent = read_model(_chat({}), options, "genai")
    assert (absent.output, absent.requests) == (None, None)
    for empty in ("[]", "", "not json", None, json.dumps({"role": "user"})):
        view = read_model(_chat({semconv.GEN_AI_OUTPUT_MESSAGES: empty}), options, "genai")
        assert (view.output, view.requests) == (None, ())
