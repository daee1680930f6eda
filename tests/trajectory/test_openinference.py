"""OpenInference: TOOL / AGENT / LLM / CHAIN spans and flattened messages."""

from __future__ import annotations

from tracescore.model import StatusCode
from tracescore.trajectory import build_trajectories
from trajectory.spans import span


def _llm(
    n: int, parent: int, start: int, calls: list[tuple[str, str, str]], **extra: object
) -> object:
    attrs: dict = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt",
        "llm.token_count.prompt": 3,
    }
    for k, (call_id, name, args) in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{k}.tool_call."
        attrs[prefix + "id"] = call_id
        attrs[prefix + "function.name"] = name
        attrs[prefix + "function.arguments"] = args
    attrs.update(extra)
    return span(n, "llm", parent, start, start + 1, attrs)


def test_tool_spans_join_flattened_requests_and_errors_keep_the_output_text() -> None:
    spans = [
        span(
            1,
            "shop.run",
            None,
            0,
            100,
            {
                "openinference.span.kind": "AGENT",
                "agent.name": "shop",
                "input.value": "hi",
                "agno.tools": ("x", "y"),
            },
        ),
        _llm(2, 1, 0, [("call_0", "x", '{"q": 1}'), ("call_1", "y", "{}")]),
        span(
            3,
            "x",
            1,
            5,
            6,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "x",
                "input.value": '{"q": 1}',
                "output.value": "{'r': 1}",
            },
        ),
        span(
            4,
            "y",
            1,
            7,
            8,
            {"openinference.span.kind": "TOOL", "tool.name": "y", "output.value": "boom"},
            StatusCode.ERROR,
        ),
        span(
            5,
            "llm",
            1,
            10,
            11,
            {
                "openinference.span.kind": "LLM",
                "llm.output_messages.0.message.contents.0.message_content.text": "done",
            },
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    calls = run.tool_calls()
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in calls] == [
        ("x", "call_0", {"q": 1}, "{'r': 1}", "ok"),
        ("y", "call_1", {}, "boom", "error"),
    ]
    assert calls[1].error_message == "boom"
    assert (run.agent, run.input, run.output, run.available_tools) == (
        "shop",
        "hi",
        "done",
        ("x", "y"),
    )


def test_requested_call_without_tool_span_or_tool_message_is_paused() -> None:
    spans = [
        span(1, "a", None, 0, 100, {"openinference.span.kind": "AGENT"}),
        _llm(2, 1, 0, [("c1", "x", "{}"), ("c2", "y", "{}")]),
        span(
            3,
            "llm",
            1,
            10,
            11,
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.tool_call_id": "c1",
                "llm.input_messages.2.message.content": "answered",
            },
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert [(c.name, c.status, c.result) for c in run.tool_calls()] == [
        ("x", "ok", "answered"),
        ("y", "paused", None),
    ]


def test_unknown_span_kind_is_a_counted_warning() -> None:
    spans = [span(1, "a", None, 0, 100, {"openinference.span.kind": "WIZARD"})]
    result = build_trajectories(spans)
    assert any("unknown openinference.span.kind" in w and "0af76519" in w for w in result.warnings)


def test_llm_tools_are_the_available_tools() -> None:
    schema = '{"type": "function", "function": {"name": "lookup"}}'
    spans = [
        span(1, "a", None, 0, 100, {"openinference.span.kind": "AGENT"}),
        _llm(2, 1, 0, [], **{"llm.tools.0.tool.json_schema": schema}),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert run.available_tools == ("lookup",)
