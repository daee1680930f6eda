"""Handoffs, calls stopped for an approval and denials told to a resumed run, on hand-written
spans: the shapes the real-framework tests (test_frameworks.py) record, cut down to the rule, and
the flat shapes the builder's fast path would otherwise read (it must leave them to the rules).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Handoff, ToolCall, Trajectory
from tracescore.trajectory import BuildOptions, build_trajectories
from tracescore.trajectory._options import PauseMarkers
from trajectory.spans import agent, assistant, call, chat, response, span, text, tool, user

OAI_GENAI = "opentelemetry.instrumentation.openai_agents"


def _run(spans: list[SpanRecord], options: BuildOptions | None = None) -> Trajectory:
    result = build_trajectories(spans, options)
    assert result.warnings == []
    return result.trajectories[0]


def _with_scope(record: SpanRecord, scope: str) -> SpanRecord:
    return replace(record, scope=scope)


def _handoff_span(n: int, parent: int, start: int, to: str | None) -> SpanRecord:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "agent_handoff"}
    if to is not None:
        attrs["gen_ai.handoff.to_agent"] = to
        attrs["gen_ai.handoff.from_agent"] = "triage"
    return span(n, "agent_handoff", parent, start, start + 1, attrs)


def _bare_chat(n: int, parent: int, start: int) -> SpanRecord:
    # No messages recorded: with it, a run is the shape the builder's fast path reads.
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    return span(n, "chat m", parent, start, start + 2, attrs)


def test_an_agent_handoff_span_is_a_handoff_step_even_in_a_flat_run() -> None:
    # One agent span, its chat and the handoff as direct children: the fast path's shape.
    spans = [agent(1, "triage"), _bare_chat(2, 1, 10), _handoff_span(3, 1, 20, "Billing Agent")]
    run = _run(spans)
    (handoff,) = run.handoffs()
    assert (handoff.target, handoff.tool_name) == ("Billing Agent", "transfer_to_billing_agent")
    assert run.tool_calls() == ()
    assert [s.kind for s in run.steps] == ["model_call", "handoff"]


def test_a_handoff_takes_the_id_and_place_of_the_transfer_call_it_answers() -> None:
    spans = [
        agent(1, "triage"),
        chat(2, 1, 10, [assistant(call("call_h", "transfer_to_billing"))]),
        _handoff_span(3, 1, 20, "billing"),
    ]
    run = _run(spans)
    assert run.steps[1] == Handoff(
        "billing", "call_h", "transfer_to_billing", None, *_times(spans[2]), spans[2].span_id
    )
    # The request was answered: no paused `no_execution` call is left for it.
    assert run.tool_calls() == ()


def _times(record: SpanRecord) -> tuple[int, int]:
    return record.start_ns, record.end_ns


def test_an_agent_handoff_span_without_a_target_is_left_out_with_a_warning() -> None:
    result = build_trajectories([agent(1, "triage"), _handoff_span(2, 1, 10, None)])
    assert result.trajectories[0].steps == ()
    assert any("agent_handoff spans without gen_ai.handoff.to_agent" in w for w in result.warnings)


def _approval_run(result: bool, scope: str = OAI_GENAI, model_after: bool = False) -> list[Any]:
    attrs: dict[str, Any] = {"gen_ai.tool.call.arguments": '{"order_id": "A-1"}'}
    if result:
        attrs["gen_ai.tool.call.result"] = "refunded"
    # A flat run (bare chat spans), as content capture on chat spans alone may leave it.
    spans = [
        agent(1, "refunds"),
        _bare_chat(2, 1, 10),
        _with_scope(tool(3, 1, 20, "refund_order", **attrs), scope),
    ]
    if model_after:
        spans.append(_bare_chat(4, 1, 30))
    return spans


def test_an_openai_agents_tool_span_that_ended_its_run_without_a_result_awaits_approval() -> None:
    (refund,) = _run(_approval_run(result=False)).tool_calls()
    assert (refund.status, refund.pause_reason) == ("paused", "approval_required")


@pytest.mark.parametrize(
    ("result", "scope", "model_after"),
    [
        pytest.param(True, OAI_GENAI, False, id="it has a result"),
        pytest.param(False, "some.other.instrumentation", False, id="another instrumentation"),
        pytest.param(False, OAI_GENAI, True, id="the model was called after it"),
    ],
)
def test_other_tool_spans_without_a_result_stay_clean(
    result: bool, scope: str, model_after: bool
) -> None:
    (refund,) = _run(_approval_run(result, scope, model_after)).tool_calls()
    assert refund.status == "ok"


def test_awaiting_approval_can_be_switched_off() -> None:
    options = BuildOptions(pause=PauseMarkers(awaiting_approval=None))
    (refund,) = _run(_approval_run(result=False), options).tool_calls()
    assert refund.status == "ok"


def _resumed(payload: Any) -> list[SpanRecord]:
    history = [
        user("Refund A-2"),
        assistant(call("call_r2", "refund_order", order_id="A-2")),
        response("call_r2", payload, key="result"),
    ]
    return [agent(1, "refunds"), chat(2, 1, 10, [assistant(text("Not refunded."))], history)]


def test_a_rejection_told_to_a_resumed_run_is_a_denied_call_before_its_model_call() -> None:
    run = _run(_resumed("Tool execution was not approved."))
    first = run.steps[0]
    assert isinstance(first, ToolCall)
    assert (first.name, first.call_id, first.arguments) == (
        "refund_order",
        "call_r2",
        {"order_id": "A-2"},
    )
    assert (first.status, first.pause_reason) == ("paused", "denied")
    assert [s.kind for s in run.steps] == ["tool_call", "model_call"]


def test_a_result_of_an_earlier_run_is_no_step_of_the_resumed_run() -> None:
    assert _run(_resumed("refunded A-2")).tool_calls() == ()


def test_a_configured_rejection_text_is_recognised() -> None:
    options = BuildOptions(pause=PauseMarkers(rejection_texts=("Nope, a human said no.",)))
    (denied,) = _run(_resumed("Nope, a human said no."), options).tool_calls()
    assert denied.pause_reason == "denied"
    assert _run(_resumed("Tool execution was not approved."), options).tool_calls() == ()


def test_a_denial_before_the_last_user_message_belongs_to_an_earlier_turn() -> None:
    spans = _resumed({"type": "execution-denied"})
    history = [
        user("Refund A-2"),
        assistant(call("call_r2", "refund_order", order_id="A-2")),
        response("call_r2", {"type": "execution-denied"}, key="result"),
        user("Then what is the weather?"),
    ]
    spans[1] = chat(2, 1, 10, [assistant(text("Sunny."))], history)
    assert _run(spans).tool_calls() == ()


def test_the_repr_answer_of_openai_agents_v2_is_read_as_tool_calls_not_as_text() -> None:
    answer = (
        "{'content': None, 'refusal': None, 'role': 'assistant', 'annotations': None, "
        "'audio': None, 'function_call': None, 'tool_calls': [{'id': 'call_1', 'function': "
        "{'arguments': '{\"city\": \"Paris\"}', 'name': 'get_weather'}, 'type': 'function'}]}"
    )
    spans = [
        agent(1, "shop"),
        chat(2, 1, 10, [assistant(text(answer))]),
        tool(3, 1, 20, "get_weather", **{"gen_ai.tool.call.result": "sunny"}),
    ]
    run = _run(spans)
    assert run.output is None
    (weather,) = run.tool_calls()
    assert (weather.call_id, weather.arguments, weather.result) == (
        "call_1",
        {"city": "Paris"},
        "sunny",
    )


@pytest.mark.parametrize(
    "content",
    [
        "{'content': 'hi', 'role': 'assistant'",  # cut short: not a literal
        "{'content': __import__('os'), 'role': 'assistant'}",  # not a literal either
        "{'content': 'x', 'role': 'user'}",
    ],
)
def test_text_that_only_looks_like_that_repr_stays_text(content: str) -> None:
    run = _run([agent(1, "shop"), chat(2, 1, 10, [assistant(text(content))])])
    assert run.output == content
