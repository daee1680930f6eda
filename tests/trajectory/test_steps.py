"""Joining requested calls to executions, their status, and the order of steps."""

from __future__ import annotations

import json
import pickle

import pytest

from tracescore.model import ModelCall, SpanEvent, StatusCode, ToolCall
from tracescore.otlp import decode_json_request
from tracescore.trajectory import BuildOptions, PauseMarkers, build_trajectories
from trajectory.spans import (
    agent,
    assistant,
    call,
    chat,
    response,
    span,
    text,
    tool,
    user,
)


def _calls(spans: list, options: BuildOptions | None = None) -> list[ToolCall]:
    result = build_trajectories(spans, options)
    assert len(result.trajectories) == 1
    return list(result.trajectories[0].tool_calls())


def _summary(calls: list[ToolCall]) -> list[tuple[str, str, str | None]]:
    return [(c.name, c.status, c.pause_reason) for c in calls]


def test_paused_call_keeps_its_place_between_its_neighbours() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "first"), call("c2", "second"), call("c3", "third"))]),
        tool(3, 1, 10, "first", "c1"),
        tool(4, 1, 11, "third", "c3"),
    ]
    assert _summary(_calls(spans)) == [
        ("first", "ok", None),
        ("second", "paused", "no_execution"),
        ("third", "ok", None),
    ]


def test_model_request_order_wins_over_execution_order() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "slow"), call("c2", "fast"))]),
        tool(3, 1, 12, "slow", "c1"),
        tool(4, 1, 10, "fast", "c2"),
    ]
    assert [c.name for c in _calls(spans)] == ["slow", "fast"]


def test_steps_interleave_model_calls_and_tool_calls_by_time() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "x"))]),
        tool(3, 1, 5, "x", "c1"),
        chat(4, 1, 10, [assistant(text("done"))]),
    ]
    steps = build_trajectories(spans).trajectories[0].steps
    assert [type(s).__name__ for s in steps] == ["ModelCall", "ToolCall", "ModelCall"]


def test_unrequested_executions_order_by_start_then_end_then_span_id() -> None:
    spans = [
        agent(1, "a"),
        span(
            4,
            "execute_tool b",
            1,
            5,
            9,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "b"},
        ),
        span(
            3,
            "execute_tool a",
            1,
            5,
            7,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "a"},
        ),
        span(
            5,
            "execute_tool c",
            1,
            5,
            7,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "c"},
        ),
        span(
            2,
            "execute_tool d",
            1,
            1,
            2,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "d"},
        ),
    ]
    assert [c.name for c in _calls(spans)] == ["d", "a", "c", "b"]


def test_call_ids_with_stray_whitespace_still_join() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call(" call_VSPy ", "weather"))]),
        tool(3, 1, 5, "weather", "call_VSPy\n", **{"gen_ai.tool.call.result": "rainy"}),
    ]
    (only,) = _calls(spans)
    assert (only.status, only.call_id, only.result, only.span_id) == (
        "ok",
        "call_VSPy",
        "rainy",
        "0000000000000003",
    )


def test_calls_without_ids_join_by_name_and_order() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "x", n=1), call("c2", "y"), call("c3", "x", n=2))]),
        tool(3, 1, 5, "x", **{"gen_ai.tool.call.arguments": '{"n": 1}'}),
        tool(4, 1, 6, "x", **{"gen_ai.tool.call.arguments": '{"n": 2}'}),
    ]
    calls = _calls(spans)
    assert [(c.name, c.call_id, c.arguments, c.status) for c in calls] == [
        ("x", "c1", {"n": 1}, "ok"),
        ("y", "c2", {}, "paused"),
        ("x", "c3", {"n": 2}, "ok"),
    ]


def test_an_execution_with_another_id_does_not_take_a_request() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "x"))]),
        tool(3, 1, 5, "x", "other-id"),
    ]
    calls = _calls(spans)
    assert [(c.call_id, c.status) for c in calls] == [("c1", "paused"), ("other-id", "ok")]


def test_a_response_without_an_execution_span_is_a_clean_call() -> None:
    # The registry examples write `result` instead of the schema's `response`.
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "x"))]),
        chat(3, 1, 5, [assistant(text("ok"))], inp=[response(" c1", "42 degrees", key="result")]),
    ]
    (only,) = _calls(spans)
    assert (only.status, only.result, only.span_id) == ("ok", "42 degrees", None)


def test_a_denied_approval_response_is_paused_denied() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "refund"))]),
        chat(
            3, 1, 5, [assistant(text("no"))], inp=[response("c1", {"denied": True, "reason": "no"})]
        ),
    ]
    assert _summary(_calls(spans)) == [("refund", "paused", "denied")]


def test_decision_events_pause_unexecuted_calls() -> None:
    deny = SpanEvent(
        "gen_ai.tool.call.decision",
        0,
        {"gen_ai.tool.call.decision.outcome": "deny", "gen_ai.tool.call.id": "c1"},
    )
    approve = SpanEvent(
        "gen_ai.tool.call.decision",
        0,
        {"gen_ai.tool.call.decision.outcome": "require_approval", "gen_ai.tool.name": "wire"},
    )
    root = span(
        1,
        "invoke_agent a",
        None,
        0,
        100,
        {"gen_ai.operation.name": "invoke_agent"},
        events=(deny, approve),
    )
    spans = [root, chat(2, 1, 0, [assistant(call("c1", "delete"), call("c2", "wire"))])]
    assert _summary(_calls(spans)) == [
        ("delete", "paused", "denied"),
        ("wire", "paused", "approval_required"),
    ]


def test_pause_markers_are_configurable() -> None:
    spans = [agent(1, "a"), chat(2, 1, 0, [assistant(call("c1", "x"))])]
    options = BuildOptions(pause=PauseMarkers(unexecuted_request=False))
    assert _summary(_calls(spans, options)) == [("x", "ok", None)]
    assert _summary(_calls(spans)) == [("x", "paused", "no_execution")]


def test_error_from_error_type_alone() -> None:
    spans = [agent(1, "a"), tool(2, 1, 5, "x", **{"error.type": "TimeoutError"})]
    (only,) = _calls(spans)
    assert (only.status, only.error_type) == ("error", "TimeoutError")


def test_error_from_an_exception_event_alone() -> None:
    event = SpanEvent("exception", 0, {"exception.type": "KeyError", "exception.message": "k"})
    failing = span(
        2,
        "execute_tool x",
        1,
        5,
        6,
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x"},
        events=(event,),
    )
    (only,) = _calls([agent(1, "a"), failing])
    assert (only.status, only.error_type, only.error_message) == ("error", "KeyError", "k")


def test_error_from_an_mcp_is_error_result() -> None:
    result = json.dumps({"content": [{"type": "text", "text": "boom"}], "isError": True})
    spans = [agent(1, "a"), tool(2, 1, 5, "mcp", **{"gen_ai.tool.call.result": result})]
    (only,) = _calls(spans)
    assert (only.status, only.error_type) == ("error", "tool_error")


@pytest.mark.parametrize(
    "text",
    [
        '{"content": [], "isError": true}',
        '{"type": "error-text", "value": "boom"}',
        '{"type": "error-json", "value": {"code": 1}}',
        '{"\\u0069sError": true}',  # escaped keys and values spell the same JSON
        '{"type": "\\u0065rror-text", "value": "boom"}',
    ],
)
def test_every_failed_result_shape_is_read_while_building(text: str) -> None:
    # Results are parsed on first read unless their text may flag a failure; these all do.
    spans = [agent(1, "a"), tool(2, 1, 5, "mcp", **{"gen_ai.tool.call.result": text})]
    (only,) = _calls(spans)
    assert (only.status, only.error_type) == ("error", "tool_error")


def test_arguments_and_results_read_lazily_equal_what_parsing_gives() -> None:
    args, result = '{"q": "x", "n": [1, 2]}', '{"rows": 3}'
    spans = [
        agent(1, "a"),
        tool(
            2, 1, 5, "x", **{"gen_ai.tool.call.arguments": args, "gen_ai.tool.call.result": result}
        ),
    ]
    (lazy,) = _calls(spans)
    eager = ToolCall(
        lazy.name, lazy.call_id, {"q": "x", "n": [1, 2]}, {"rows": 3}, lazy.status,
        start_ns=lazy.start_ns, end_ns=lazy.end_ns, span_id=lazy.span_id, agent=lazy.agent,
    )  # fmt: skip
    assert lazy == eager
    assert repr(lazy) == repr(eager)
    assert lazy.to_dict() == eager.to_dict()
    assert pickle.loads(pickle.dumps(lazy)) == eager


def test_error_from_the_status_enum_name_in_otlp_json() -> None:
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "00f067aa0ba902b7",
                                "name": "execute_tool x",
                                "status": {"code": "STATUS_CODE_ERROR", "message": "bad"},
                                "attributes": [
                                    {
                                        "key": "gen_ai.operation.name",
                                        "value": {"stringValue": "execute_tool"},
                                    },
                                    {"key": "gen_ai.tool.name", "value": {"stringValue": "x"}},
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (only,) = _calls(decode_json_request(body).spans)
    assert (only.status, only.error_message) == ("error", "bad")


def test_a_clean_call_has_no_error_fields() -> None:
    (only,) = _calls([agent(1, "a"), tool(2, 1, 5, "x", StatusCode.OK)])
    assert (only.status, only.error_type, only.error_message) == ("ok", None, None)


def test_model_calls_carry_tokens_and_model() -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(text("hi"))], **{"gen_ai.response.model": "gpt-x"}),
    ]
    (model,) = build_trajectories(spans).trajectories[0].model_calls()
    assert model == ModelCall("gpt-x", 10, 5, model.start_ns, model.end_ns, "0000000000000002")
    assert model.duration_ms == 2.0


def test_an_inner_span_of_the_same_call_is_read_once() -> None:
    # An MCP client span inside the framework's tool span, both GenAI execute_tool.
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "search"))]),
        tool(3, 1, 5, "search", "c1"),
        tool(4, 3, 6, "search", "c1", **{"gen_ai.tool.call.result": "found"}),
    ]
    (only,) = _calls(spans)
    assert (only.span_id, only.result) == ("0000000000000003", "found")


def test_user_input_and_final_output_fall_back_to_model_spans() -> None:
    spans = [
        span(1, "invoke_agent a", None, 0, 100, {"gen_ai.operation.name": "invoke_agent"}),
        chat(2, 1, 0, [assistant(call("c1", "x"))], inp=[user("hello")]),
        chat(3, 1, 10, [assistant(text("bye"))], inp=[user("hello")]),
    ]
    run = build_trajectories(spans).trajectories[0]
    assert (run.agent, run.input, run.output) == ("a", "hello", "bye")
