"""Trajectories rebuilt from OpenLLMetry (traceloop-sdk) traces written while running offline.

The traces come from `tests/frameworks/traceloop_traces.py`: plain-Python agents written with
Traceloop's `@workflow` / `@agent` / `@tool` decorators, calling the scripted fake LLM server
through the `openai` client (Traceloop's OpenAI instrumentation records each request as an
`openai.chat` span). Tool spans carry no call id, so ids come from the model's tool calls on the
chat spans, joined by tool name and order. The workflow span is not an agent: only `@agent`
spans are runs.

traceloop-sdk is pinned to 0.40.14 (see pyproject.toml), whose OpenAI instrumentation writes the
legacy flattened chat attributes (`llm.request.type=chat`, `gen_ai.prompt.N.*`,
`gen_ai.completion.N.tool_calls.M.id|name|arguments`, `llm.request.functions.N.name`): model
calls, call ids, offered tools and requested-but-unrun calls come from those.
"""

from __future__ import annotations

from typing import Any

from frameworks import cases
from trajectory.test_frameworks import build, call, calls, kinds, run_of, subagent

Doc = dict[str, Any]
SHOP_TOOLS = ("get_weather", "lookup_order", "charge_card", "close_account")
PROMPTS = cases.TRACELOOP_PROMPTS
ANSWERS = cases.TRACELOOP_ANSWERS


def test_traceloop_clean_calls_take_ids_from_the_chat_span_and_results_from_entity_output(
    traceloop_traces: dict[str, Doc],
) -> None:
    (run,) = build(traceloop_traces["traceloop-clean"], "traceloop clean").trajectories
    # The agent's entity input is {"args": [prompt], "kwargs": {}}; the run's input is the
    # user message the model saw.
    assert (run.agent, run.input, run.output) == ("shop_agent", PROMPTS["clean"], ANSWERS["clean"])
    assert run.available_tools == SHOP_TOOLS
    assert calls(run) == [
        call("get_weather", "call_w1", {"city": "Paris"}, "sunny in Paris"),
        call(
            "lookup_order",
            "call_o1",
            {"order_id": "A-42"},
            {"order_id": "A-42", "status": "shipped"},
        ),
    ]
    assert kinds(run) == ["model_call", "tool_call", "tool_call", "model_call"]
    assert [m.model for m in run.model_calls()] == ["fake-gpt", "fake-gpt"]


def test_traceloop_raising_tool_is_an_errored_call_with_the_exception_type(
    traceloop_traces: dict[str, Doc],
) -> None:
    (run,) = build(traceloop_traces["traceloop-tool_error"], "traceloop error").trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        PROMPTS["tool_error"],
        ANSWERS["tool_error"],
    )
    assert calls(run) == [
        call("get_weather", "call_e1", {"city": "Paris"}, "sunny in Paris"),
        # The decorator records the exception and sets ERROR; no entity output is written.
        call(
            "charge_card",
            "call_e2",
            {"amount_cents": 0},
            None,
            "error",
            error_type="ValueError",
            error_message="amount_cents must be positive",
        ),
    ]
    assert kinds(run) == ["model_call", "tool_call", "tool_call", "model_call"]


def test_traceloop_call_awaiting_approval_is_paused_after_its_executed_neighbour(
    traceloop_traces: dict[str, Doc],
) -> None:
    (run,) = build(traceloop_traces["traceloop-paused"], "traceloop paused").trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        PROMPTS["paused"],
        ANSWERS["paused"],
    )
    assert calls(run) == [
        call("get_weather", "call_p1", {"city": "Paris"}, "sunny in Paris"),
        call(
            "close_account", "call_p2", {"user_id": 7}, None, "paused", pause_reason="no_execution"
        ),
    ]
    assert kinds(run) == ["model_call", "tool_call", "tool_call"]


def test_traceloop_agent_calling_an_agent_is_a_run_of_its_own_and_a_step_of_the_caller(
    traceloop_traces: dict[str, Doc],
) -> None:
    result = build(traceloop_traces["traceloop-subagent"], "traceloop subagent")
    # support_workflow (the root, a workflow span) is no run: both runs are @agent spans.
    assert sorted(t.agent or "" for t in result.trajectories) == ["billing_agent", "support_agent"]
    parent, child = run_of(result, "support_agent"), run_of(result, "billing_agent")
    assert (parent.input, parent.output) == (PROMPTS["subagent"], ANSWERS["subagent"])
    assert parent.available_tools == ()
    assert calls(parent) == []
    assert kinds(parent) == ["agent:billing_agent", "model_call"]
    assert subagent(parent, "billing_agent").span_id == child.span_id
    lookup = call(
        "lookup_invoice",
        "call_b1",
        {"invoice_id": "INV-9"},
        {"invoice_id": "INV-9", "total_cents": 12900},
    )
    assert (child.input, child.output) == (PROMPTS["billing"], ANSWERS["billing"])
    assert child.available_tools == ("lookup_invoice",)
    assert calls(child) == [lookup]
    assert kinds(child) == ["model_call", "tool_call", "model_call"]
    assert calls(parent, include_subagents=True) == [lookup]
