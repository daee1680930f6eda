"""OpenLLMetry / Traceloop decorators and framework spans."""

from __future__ import annotations

import json

from tracescore.trajectory import build_trajectories
from trajectory.spans import span


def test_decorated_agent_and_tools() -> None:
    spans = [
        span(
            1,
            "flow.workflow",
            None,
            0,
            100,
            {"traceloop.span.kind": "workflow", "traceloop.entity.name": "flow"},
        ),
        span(
            2,
            "support.agent",
            1,
            0,
            90,
            {
                "traceloop.span.kind": "agent",
                "traceloop.entity.name": "support",
                "traceloop.entity.input": json.dumps({"args": ["where is A-42?"], "kwargs": {}}),
                "traceloop.entity.output": json.dumps("shipped"),
            },
        ),
        span(
            3,
            "lookup_order.tool",
            2,
            5,
            6,
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "lookup_order",
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"order_id": "A-42"}}),
                "traceloop.entity.output": json.dumps({"status": "shipped"}),
            },
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    (only,) = run.tool_calls()
    assert (run.agent, run.input, run.output) == ("support", "where is A-42?", "shipped")
    assert (only.name, only.arguments, only.result, only.call_id) == (
        "lookup_order",
        {"order_id": "A-42"},
        {"status": "shipped"},
        None,
    )


def test_framework_span_with_genai_and_traceloop_keys_is_read_once() -> None:
    spans = [
        span(
            1,
            "agent.agent",
            None,
            0,
            100,
            {
                "traceloop.span.kind": "agent",
                "gen_ai.operation.name": "invoke_agent",
                "traceloop.entity.name": "lc",
            },
        ),
        span(
            2,
            "execute_tool search",
            1,
            5,
            6,
            {
                "traceloop.span.kind": "tool",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"q": "x"}}),
            },
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    (only,) = run.tool_calls()
    # GenAI names the tool; Traceloop fills the arguments GenAI left out.
    assert (run.agent, only.name, only.arguments) == ("lc", "search", {"q": "x"})
