"""OpenLLMetry's legacy flattened chat spans (`llm.request.type`, `gen_ai.prompt.N.*`, ...)."""

from __future__ import annotations

import pytest

from tracescore.model.span import AttrValue
from tracescore.trajectory import BuildOptions, build_trajectories, needed_attribute
from tracescore.trajectory._classify import classify
from trajectory.spans import span

AGENT = {
    "traceloop.span.kind": "agent",
    "traceloop.entity.name": "shop",
    "traceloop.entity.output": '"done"',
}


def _chat(extra: dict[str, AttrValue]) -> dict[str, AttrValue]:
    return {
        "llm.request.type": "chat",
        "gen_ai.request.model": "gpt-x",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "be brief",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "refund A-1 and notify me",
        "llm.request.functions.0.name": "refund",
        "llm.request.functions.0.parameters": "{}",
        "llm.request.functions.1.name": "notify",
        **extra,
    }


def test_flattened_chat_spans_are_model_calls_whose_tool_calls_join_the_tool_spans() -> None:
    first = _chat(
        {
            "gen_ai.response.model": "gpt-x-2024",
            "gen_ai.usage.prompt_tokens": 10,
            "gen_ai.usage.completion_tokens": 4,
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.finish_reason": "tool_calls",
            # Index 10 sorts after 2 numerically, not as text.
            "gen_ai.completion.0.tool_calls.10.id": "c3",
            "gen_ai.completion.0.tool_calls.10.name": "notify",
            "gen_ai.completion.0.tool_calls.10.arguments": '{"to": "me"}',
            "gen_ai.completion.0.tool_calls.0.id": "c1",
            "gen_ai.completion.0.tool_calls.0.name": "refund",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"order": "A-1"}',
            "gen_ai.completion.0.tool_calls.2.id": "c2",
            "gen_ai.completion.0.tool_calls.2.name": "refund",
            "gen_ai.completion.0.tool_calls.2.arguments": '{"order": "A-2"}',
        },
    )
    second = _chat(
        {
            "llm.usage.prompt_tokens": 30,
            "llm.usage.completion_tokens": 3,
            "gen_ai.prompt.2.role": "assistant",
            "gen_ai.prompt.3.role": "tool",
            "gen_ai.prompt.3.tool_call_id": "c2",
            "gen_ai.prompt.3.content": '{"isError": true, "content": []}',
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "done",
        },
    )
    tool = {"traceloop.span.kind": "tool", "traceloop.entity.name": "refund"}
    spans = [
        span(1, "shop.agent", None, 0, 30, AGENT),
        span(2, "openai.chat", 1, 1, 2, first),
        # The decorated tool span has no call id: it takes the first `refund` request's.
        span(3, "refund.tool", 1, 3, 4, {**tool, "traceloop.entity.output": '"ok"'}),
        span(5, "openai.chat", 1, 20, 21, second),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert run.input == "refund A-1 and notify me"
    assert run.available_tools == ("refund", "notify")
    assert [(c.name, c.call_id, c.arguments, c.status) for c in run.tool_calls()] == [
        ("refund", "c1", {"order": "A-1"}, "ok"),
        # Never executed, but its result came back flagged as an error.
        ("refund", "c2", {"order": "A-2"}, "error"),
        # Never executed and no response: awaiting approval.
        ("notify", "c3", {"to": "me"}, "paused"),
    ]
    assert [(m.model, m.input_tokens, m.output_tokens) for m in run.model_calls()] == [
        ("gpt-x-2024", 10, 4),
        ("gpt-x", 30, 3),
    ]


def test_chat_span_without_recorded_completions_requests_nothing_known() -> None:
    view = classify(span(2, "openai.chat", 1, 1, 2, _chat({})), BuildOptions())
    assert view is not None
    assert (view.role, view.requests, view.tools) == ("model", None, ("refund", "notify"))


@pytest.mark.parametrize("request_type", ["embedding", "rerank"])
def test_other_request_types_are_not_model_calls(request_type: str) -> None:
    view = classify(
        span(2, "openai.embeddings", 1, 1, 2, {"llm.request.type": request_type}), BuildOptions()
    )
    assert view is not None
    assert view.role == "other"


@pytest.mark.parametrize(
    "key",
    [
        "llm.request.type",
        "gen_ai.prompt.3.tool_call_id",
        "gen_ai.completion.0.tool_calls.1.arguments",
        "llm.request.functions.0.name",
        "llm.usage.prompt_tokens",
        "gen_ai.usage.completion_tokens",
    ],
)
def test_needed_attribute_keeps_the_flattened_keys(key: str) -> None:
    assert needed_attribute(key)
