"""pydantic-ai: deferrals, validation failures, output tools, legacy spans."""

from __future__ import annotations

import json

import pytest

from tracescore.model import SpanEvent, StatusCode
from tracescore.trajectory import BuildOptions, PauseMarkers, build_trajectories
from trajectory.spans import agent, assistant, call, chat, span, tool


def _only_call(spans: list, options: BuildOptions | None = None):  # type: ignore[no-untyped-def]
    (run,) = build_trajectories(spans, options).trajectories
    (only,) = run.tool_calls()
    return only


@pytest.mark.parametrize(
    ("deferral", "status", "reason"),
    [
        ("CallDeferred", StatusCode.UNSET, "deferred"),
        ("ApprovalRequired", StatusCode.UNSET, "approval_required"),
        # Before v5 a deferral also sets status ERROR: it is still paused, not an error.
        ("ApprovalRequired", StatusCode.ERROR, "approval_required"),
        ("SomethingNew", StatusCode.UNSET, "deferred"),
    ],
)
def test_deferrals_are_paused(deferral: str, status: StatusCode, reason: str) -> None:
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "refund"))]),
        tool(3, 1, 5, "refund", "c1", status, **{"pydantic_ai.tool.deferral.name": deferral}),
    ]
    only = _only_call(spans)
    assert (only.status, only.pause_reason, only.error_type) == ("paused", reason, None)


def test_deferral_markers_are_configurable() -> None:
    spans = [
        agent(1, "a"),
        tool(3, 1, 5, "refund", "c1", **{"pydantic_ai.tool.deferral.name": "X"}),
    ]
    options = BuildOptions(pause=PauseMarkers(other_deferral_reason=None))
    assert _only_call(spans, options).status == "ok"


def test_validation_failure_is_an_error() -> None:
    spans = [
        agent(1, "a"),
        tool(
            3, 1, 5, "x", "c1", StatusCode.ERROR, **{"pydantic_ai.tool.failure_stage": "validation"}
        ),
    ]
    only = _only_call(spans)
    assert (only.status, only.error_type) == ("error", "validation")


def test_retry_prompt_is_an_error_with_the_prompt_as_result() -> None:
    event = SpanEvent(
        "exception", 0, {"exception.type": "ToolRetryError", "exception.message": "try again"}
    )
    retry = span(
        3,
        "execute_tool x",
        1,
        5,
        6,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "x",
            "gen_ai.tool.call.result": "try again",
        },
        StatusCode.ERROR,
        events=(event,),
        scope="pydantic-ai",
    )
    only = _only_call([agent(1, "a"), retry])
    assert (only.status, only.error_type, only.result) == ("error", "ToolRetryError", "try again")


def test_output_tools_named_by_the_model_request_parameters_are_left_out() -> None:
    params = json.dumps({"function_tools": [{"name": "x"}], "output_tools": [{"name": "answer"}]})
    spans = [
        agent(1, "a"),
        chat(
            2,
            1,
            0,
            [assistant(call("c1", "x"), call("c2", "answer"))],
            model_request_parameters=params,
        ),
        tool(3, 1, 5, "x", "c1"),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert [c.name for c in run.tool_calls()] == ["x"]
    assert run.available_tools == ("x",)


def test_legacy_running_tool_and_agent_run_spans() -> None:
    spans = [
        span(
            1,
            "agent run",
            None,
            0,
            100,
            {"agent_name": "old", "final_result": "fine", "pydantic_ai.all_messages": "[]"},
        ),
        span(
            2,
            "running tool",
            1,
            5,
            6,
            {
                "gen_ai.tool.name": "x",
                "gen_ai.tool.call.id": "c1",
                "tool_arguments": '{"a": 1}',
                "tool_response": "r",
            },
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    (only,) = run.tool_calls()
    assert (run.agent, run.output) == ("old", "fine")
    assert (only.name, only.call_id, only.arguments, only.result) == ("x", "c1", {"a": 1}, "r")


def test_final_result_as_structured_output_is_shown_as_json_text() -> None:
    root = span(
        1,
        "invoke_agent a",
        None,
        0,
        100,
        {
            "gen_ai.operation.name": "invoke_agent",
            "final_result": '{"b": 2, "a": 1}',
            "agent_name": "a",
        },
    )
    (run,) = build_trajectories([root]).trajectories
    assert run.output == '{"a": 1, "b": 2}'
