"""Trajectories rebuilt from Vercel AI SDK traces written by running the real SDK offline on Node.

The traces come from `tests/frameworks/vercel/generate.mjs`: `generateText` from `ai` 6.0.325
with `experimental_telemetry` (the legacy `ai.*` spans), the SDK's own `MockLanguageModelV3`
scripting the model, spans captured by the OpenTelemetry JS SDK's InMemorySpanExporter and
written with its OTLP JSON serializer (hex ids). `@ai-sdk/otel` (the GenAI integration) is not
covered: every release requires `ai` 7 and node >= 22, and the machines have node 20.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frameworks.vercel_traces import vercel_traces
from trajectory.test_frameworks import build, call, calls, kinds

Doc = dict[str, Any]
TOOLS = ("get_weather", "lookup_order", "charge_card", "close_account")
DENY_PROMPT = "Check the weather in Paris, then close account 7."

__all__ = ["vercel_traces"]  # the session fixture, used by the tests below


def test_vercel_clean_calls_keep_ids_arguments_and_results(vercel_traces: dict[str, Doc]) -> None:
    (run,) = build(vercel_traces["vercel-clean"], "vercel clean").trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        "What is the weather in Paris, and where is order A-42?",
        "It is sunny in Paris and order A-42 has shipped.",
    )
    assert run.available_tools == TOOLS
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
    assert [m.model for m in run.model_calls()] == ["mock-model", "mock-model"]


def test_vercel_throwing_tool_is_an_errored_call_and_the_run_goes_on(
    vercel_traces: dict[str, Doc],
) -> None:
    (run,) = build(vercel_traces["vercel-tool_error"], "vercel error").trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        "Check the weather in Paris and charge my card 0 cents.",
        "It is sunny in Paris, but the card could not be charged.",
    )
    assert calls(run) == [
        call("get_weather", "call_e1", {"city": "Paris"}, "sunny in Paris"),
        # recordErrorOnSpan: status ERROR + an exception event named after the JS error class.
        call(
            "charge_card",
            "call_e2",
            {"amount_cents": 0},
            None,
            "error",
            error_type="Error",
            error_message="amount_cents must be positive",
        ),
    ]
    assert kinds(run) == ["model_call", "tool_call", "tool_call", "model_call"]


def _denied_runs(doc: Doc) -> tuple[Any, Any]:
    result = build(doc, "vercel denied")
    # Two generateText calls, two traces: the request, then the run that receives the denial.
    first, second = sorted(result.trajectories, key=lambda t: t.output is not None)
    return first, second


def test_vercel_needs_approval_pauses_the_first_run_before_the_call(
    vercel_traces: dict[str, Doc],
) -> None:
    first, _ = _denied_runs(vercel_traces["vercel-denied"])
    assert (first.agent, first.input, first.output) == ("shop_agent", DENY_PROMPT, None)
    assert calls(first) == [
        call("get_weather", "call_d1", {"city": "Paris"}, "sunny in Paris"),
        call(
            "close_account", "call_d2", {"user_id": 7}, None, "paused", pause_reason="no_execution"
        ),
    ]
    assert kinds(first) == ["model_call", "tool_call", "tool_call"]


def test_vercel_denied_approval_is_a_paused_denied_call_of_the_resumed_run(
    vercel_traces: dict[str, Doc],
) -> None:
    """In AI SDK 6 the denial arrives in the next generateText call, whose only record of
    close_account is the execution-denied tool-result in ai.prompt.messages: the resumed run
    shows it as a paused call (`denied`) before the model call it was told to."""
    _, second = _denied_runs(vercel_traces["vercel-denied"])
    assert (second.agent, second.input, second.output) == (
        "shop_agent",
        DENY_PROMPT,
        "I did not close account 7: you declined.",
    )
    assert calls(second) == [
        call(
            "close_account",
            "call_d2",
            {"user_id": 7},
            {"type": "execution-denied", "reason": "the user declined"},
            "paused",
            pause_reason="denied",
        ),
    ]
    assert kinds(second) == ["tool_call", "model_call"]


def test_a_tool_started_in_its_model_calls_millisecond_still_follows_it() -> None:
    # Recorded by the Vercel case above on a run where CI failed: JavaScript times have
    # millisecond resolution, and doGenerate and the ai.toolCall it requested both start at
    # ...760000000. A requested call never goes before the model call that requested it.
    path = Path(__file__).parents[1] / "testdata/regressions"
    doc = json.loads((path / "vercel-tool-in-the-model-calls-millisecond.otlp.json").read_text())
    (run,) = build(doc, "vercel same millisecond").trajectories
    assert kinds(run) == ["model_call", "tool_call", "tool_call", "model_call"]
