"""Convention detection per span, read-once merging, and the receiver's key filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.views import comparable_view
from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import READINGS
from tracescore.otlp import read_trace_files
from tracescore.trajectory import (
    NEEDED_KEYS,
    NEEDED_PREFIXES,
    READING_CONDITIONS,
    READING_KEYS,
    BuildOptions,
    attribute_filter,
    build_trajectories,
    needed_attribute,
    value_kept,
)
from tracescore.trajectory._classify import classify, classify_every_convention
from tracescore.trajectory._messages import ERROR_RESULT_NEEDLES
from trajectory.spans import agent, span


def test_a_span_described_by_two_conventions_is_one_call() -> None:
    # google-adk writes both gen_ai.tool.* and OpenInference tool.* on one span.
    both = span(
        2,
        "execute_tool say_hello",
        1,
        5,
        6,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "say_hello",
            "openinference.span.kind": "TOOL",
            "tool.name": "say_hello",
            "input.value": '{"who": "you"}',
            "output.value": "hello",
        },
    )
    (run,) = build_trajectories([agent(1, "a"), both]).trajectories
    (only,) = run.tool_calls()
    # GenAI decides; OpenInference fills what GenAI did not record.
    assert (only.name, only.arguments, only.result) == ("say_hello", {"who": "you"}, "hello")


def test_one_trace_may_mix_conventions() -> None:
    spans = [
        agent(1, "a"),
        span(2, "lookup", 1, 5, 6, {"openinference.span.kind": "TOOL", "tool.name": "lookup"}),
        span(
            3,
            "ai.toolCall",
            1,
            7,
            8,
            {"ai.operationId": "ai.toolCall", "ai.toolCall.name": "refund"},
        ),
        span(
            4,
            "notify.tool",
            1,
            9,
            10,
            {"traceloop.span.kind": "tool", "traceloop.entity.name": "notify"},
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert [c.name for c in run.tool_calls()] == ["lookup", "refund", "notify"]


@pytest.mark.parametrize(
    "key",
    [
        semconv.GEN_AI_TOOL_CALL_ARGUMENTS,
        semconv.OI_SPAN_KIND,
        "llm.output_messages.0.message.tool_calls.3.tool_call.id",
        semconv.AI_TOOL_CALL_ARGS,
        semconv.TRACELOOP_ENTITY_INPUT,
        semconv.MASTRA_SPAN_TYPE,
        semconv.PYDANTIC_AI_DEFERRAL_NAME,
    ],
)
def test_needed_attribute_keeps_what_readers_read(key: str) -> None:
    assert needed_attribute(key)


@pytest.mark.parametrize(
    "key", ["logfire.json_schema", "http.url", "llm.invocation_parameters", "gen_ai.system"]
)
def test_needed_attribute_drops_the_rest(key: str) -> None:
    assert not needed_attribute(key)


def test_needed_keys_are_all_semconv_names() -> None:
    names = {v for k, v in vars(semconv).items() if k.isupper() and isinstance(v, str)}
    assert names >= NEEDED_KEYS


def _fixture_spans() -> list[SpanRecord]:
    data = Path(__file__).parent.parent / "testdata"
    paths = sorted(str(p) for p in data.glob("frameworks/*.otlp.json"))
    paths += sorted(str(p) for p in data.glob("traces/*/input.otlp.json"))
    assert len(paths) > 10, paths  # the dispatch must be checked on real recordings
    return read_trace_files(paths).spans


def test_marker_dispatch_classifies_every_recorded_span_as_asking_every_reader() -> None:
    # classify() asks only the readers whose marker key, scope or name prefix the span has;
    # every recorded framework span must come out exactly as when every reader is asked.
    options = BuildOptions()
    spans = _fixture_spans()
    recognised = 0
    for record in spans:
        fast = comparable_view(classify(record, options))
        full = comparable_view(classify_every_convention(record, options))
        assert fast == full, record.name
        recognised += fast is not None
    assert recognised > len(spans) // 4


def test_attribute_filter_adds_the_keys_a_config_matches_on() -> None:
    keep = attribute_filter(["deployment.environment", "customer.tier"])
    assert keep("customer.tier")
    assert keep(semconv.GEN_AI_TOOL_NAME)
    assert keep("llm.tools.0.tool.json_schema")
    assert not keep("http.url")
    assert attribute_filter() is needed_attribute


def test_attribute_filter_leaves_out_the_keys_of_unread_parts() -> None:
    keep = attribute_filter(unread=["tool_arguments", "model_usage"])
    for key in (*READING_KEYS["tool_arguments"], *READING_KEYS["model_usage"]):
        assert not keep(key), key
    assert keep(semconv.GEN_AI_TOOL_NAME) is True
    assert keep(semconv.GEN_AI_TOOL_CALL_RESULT) is True
    assert keep("gen_ai.prompt.0.content")
    # Results unread: a GenAI result only when it may make its call failed (MCP isError).
    results = attribute_filter(unread=["tool_results"])
    texts = results(semconv.GEN_AI_TOOL_CALL_RESULT)
    assert texts == ERROR_RESULT_NEEDLES
    assert value_kept(texts, '{"isError": true}')
    assert value_kept(texts, '{"a": "\\u00e9"}')
    assert not value_kept(texts, '{"temperature": 21}')
    assert value_kept(texts, "café")  # not ASCII: the scanner decodes it
    assert value_kept(texts, {"isError": False})  # not a str: decoded as well
    assert results(semconv.GEN_AI_TOOL_CALL_ARGUMENTS) is True
    assert (
        attribute_filter([semconv.GEN_AI_TOOL_CALL_RESULT], unread=["tool_results"])(
            semconv.GEN_AI_TOOL_CALL_RESULT
        )
        is True
    )  # a key a scenario matches on is decoded whole
    only_arguments = attribute_filter(unread=["tool_arguments"])
    assert not only_arguments(semconv.GEN_AI_TOOL_CALL_ARGUMENTS)
    assert only_arguments(semconv.GEN_AI_USAGE_INPUT_TOKENS)
    # A key a scenario matches on stays, whatever is left unread.
    matched = attribute_filter([semconv.GEN_AI_REQUEST_MODEL], unread=["model_usage"])
    assert matched(semconv.GEN_AI_REQUEST_MODEL)
    assert not matched(semconv.GEN_AI_RESPONSE_MODEL)


def test_the_keys_of_a_part_are_read_for_nothing_else() -> None:
    # attribute_filter drops them by exact key: none may also be caught by a needed prefix.
    every = frozenset().union(*READING_KEYS.values(), *READING_CONDITIONS.values())
    assert every <= NEEDED_KEYS
    assert not [k for k in every if k.startswith(NEEDED_PREFIXES)]
    assert set(READING_KEYS) == READINGS
    assert set(READING_CONDITIONS) <= READINGS
