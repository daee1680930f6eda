"""Mastra's exporter: no call ids, error ids, run input/output, tool name lists."""

from __future__ import annotations

import json

from tracescore.trajectory import build_trajectories
from trajectory.spans import assistant, call, chat, span


def test_mastra_tool_calls_join_by_name_and_keep_error_ids() -> None:
    spans = [
        span(
            1,
            "invoke_agent support",
            None,
            0,
            100,
            {
                "mastra.span.type": "AGENT_RUN",
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "gen_ai.tool.definitions": json.dumps(["lookup", "refund"]),
                "mastra.agent_run.input": json.dumps([{"role": "user", "content": "refund A-42"}]),
                "mastra.agent_run.output": json.dumps({"text": "refunded"}),
            },
        ),
        chat(
            2,
            1,
            0,
            [assistant(call("x1", "lookup"), call("x2", "refund"))],
            **{"mastra.span.type": "MODEL_GENERATION"},
        ),
        span(
            3,
            "execute_tool lookup",
            1,
            5,
            6,
            {
                "mastra.span.type": "TOOL_CALL",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup",
            },
        ),
        span(
            4,
            "execute_tool refund",
            1,
            7,
            8,
            {
                "mastra.span.type": "MCP_TOOL_CALL",
                "gen_ai.tool.name": "refund",
                "error.type": "TOOL_EXECUTION_FAILED",
                "error.message": "card declined",
            },
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert (run.agent, run.input, run.output, run.available_tools) == (
        "support",
        "refund A-42",
        "refunded",
        ("lookup", "refund"),
    )
    assert [
        (c.name, c.call_id, c.status, c.error_type, c.error_message) for c in run.tool_calls()
    ] == [
        ("lookup", "x1", "ok", None, None),
        ("refund", "x2", "error", "TOOL_EXECUTION_FAILED", "card declined"),
    ]
