"""Vercel AI SDK: legacy `ai.*` spans and the GenAI spans of @ai-sdk/otel."""

from __future__ import annotations

import json

from tracescore.model import StatusCode
from tracescore.trajectory import build_trajectories
from trajectory.spans import assistant, call, chat, response, span, text


def test_legacy_spans_join_by_tool_call_id_and_denials_are_paused() -> None:
    tool_calls = json.dumps(
        [
            {"toolCallId": "t1", "toolName": "weather", "input": '{"city": "Oslo"}'},
            {"toolCallId": "t2", "toolName": "refund", "args": {"amount": 5}},
            {"toolCallId": "t3", "toolName": "fail", "args": {}},
        ]
    )
    prompt = json.dumps(
        [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "t2",
                        "output": {"type": "execution-denied", "reason": "no"},
                    }
                ],
            },
        ]
    )
    spans = [
        span(
            1,
            "ai.generateText",
            None,
            0,
            100,
            {
                "ai.operationId": "ai.generateText",
                "ai.telemetry.functionId": "support",
                "ai.prompt": '{"prompt": "hi"}',
                "ai.response.text": "bye",
            },
        ),
        span(
            2,
            "ai.generateText.doGenerate",
            1,
            0,
            5,
            {
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.response.toolCalls": tool_calls,
                "ai.usage.promptTokens": 7,
            },
        ),
        span(
            3,
            "ai.toolCall",
            1,
            6,
            7,
            {
                "ai.operationId": "ai.toolCall",
                "ai.toolCall.name": "weather",
                "ai.toolCall.id": "t1",
                "ai.toolCall.args": '{"city": "Oslo"}',
                "ai.toolCall.result": '"cold"',
            },
        ),
        span(
            4,
            "ai.toolCall",
            1,
            6,
            7,
            {"ai.operationId": "ai.toolCall", "ai.toolCall.name": "fail", "ai.toolCall.id": "t3"},
            StatusCode.ERROR,
            "kaput",
        ),
        span(
            5,
            "ai.generateText.doGenerate",
            1,
            8,
            9,
            {
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.prompt.messages": prompt,
                "ai.response.text": "bye",
            },
        ),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert (run.agent, run.input, run.output) == ("support", "hi", "bye")
    assert [
        (c.name, c.arguments, c.result, c.status, c.pause_reason) for c in run.tool_calls()
    ] == [
        ("weather", {"city": "Oslo"}, "cold", "ok", None),
        ("refund", {"amount": 5}, {"type": "execution-denied", "reason": "no"}, "paused", "denied"),
        ("fail", {}, None, "error", None),
    ]
    assert run.model_calls()[0].input_tokens == 7


def test_genai_spans_of_ai_sdk_otel_with_a_denied_approval() -> None:
    spans = [
        span(
            1,
            "invoke_agent support",
            None,
            0,
            100,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        ),
        span(2, "step 0", 1, 0, 10),
        chat(3, 2, 0, [assistant(call("c1", "refund"))]),
        span(4, "step 1", 1, 20, 30),
        chat(5, 4, 20, [assistant(text("denied"))], inp=[response("c1", {"denied": True})]),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert [(c.name, c.status, c.pause_reason) for c in run.tool_calls()] == [
        ("refund", "paused", "denied")
    ]
