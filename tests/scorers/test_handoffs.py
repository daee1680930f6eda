"""Handoffs are no tool calls, and a scorer may still name one as `handoff:<agent>`.

On hand-built runs, and on the OpenAI Agents SDK handoff recorded by both instrumentations
(tests/testdata/frameworks), which must score the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scorers._build import agent, call, run, score
from tracescore.model import Handoff, Trajectory
from tracescore.otlp import decode_json_request
from tracescore.trajectory import build_trajectories

FRAMEWORKS = Path(__file__).resolve().parents[1] / "testdata" / "frameworks"


def _handoff(target: str = "billing") -> Handoff:
    return Handoff(target, "call_h", f"transfer_to_{target}")


TRIAGE = run(call("lookup"), _handoff(), output=None)


@pytest.mark.parametrize(
    ("config", "value"),
    [
        pytest.param({"type": "max_tool_calls", "max": 1}, 1.0, id="max_tool_calls"),
        pytest.param(
            {"type": "tool_calls", "expected_tools": ["lookup"], "allow_additional": False},
            1.0,
            id="tool_calls allow_additional false",
        ),
        pytest.param({"type": "tool_order", "tools": ["lookup"]}, 1.0, id="tool_order"),
        pytest.param(
            {"type": "trajectory_accuracy", "steps": [{"tool": "lookup"}], "ordering": "strict"},
            1.0,
            id="strict trajectory_accuracy",
        ),
        pytest.param(
            {"type": "tool_call_accuracy", "expected_tool": "lookup", "strict_mode": True},
            1.0,
            id="strict tool_call_accuracy",
        ),
        pytest.param({"type": "used_no_tools"}, 0.0, id="used_no_tools sees lookup only"),
    ],
)
def test_a_handoff_is_no_tool_call(config: dict[str, Any], value: float) -> None:
    assert score(config, TRIAGE).value == value


@pytest.mark.parametrize(
    ("config", "value"),
    [
        ({"type": "tool_order", "tools": ["lookup", "handoff:billing"]}, 1.0),
        ({"type": "tool_order", "tools": ["handoff:billing", "lookup"]}, 0.0),
        ({"type": "tool_order", "tools": ["lookup", "handoff:shipping"]}, 0.0),
        ({"type": "called_tool", "tool": "handoff:billing"}, 1.0),
        ({"type": "called_tool", "tool": "handoff:billing", "times": 2}, 0.0),
        ({"type": "did_not_call", "tool": "handoff:billing"}, 0.0),
        ({"type": "did_not_call", "tool": "handoff:shipping"}, 1.0),
        ({"type": "tool_call_accuracy", "expected_tool": "handoff:billing"}, 1.0),
        (
            {"type": "tool_call_accuracy", "expected_tool_order": ["lookup", "handoff:billing"]},
            1.0,
        ),
        (
            {
                "type": "trajectory_accuracy",
                "steps": [{"tool": "lookup"}, {"tool": "handoff:billing"}],
                "ordering": "strict",
            },
            1.0,
        ),
        (
            {
                "type": "tool_calls",
                "expected_tools": ["lookup", "handoff:billing"],
                "allow_additional": False,
            },
            1.0,
        ),
        (
            {
                "type": "trajectory_guardrails",
                "blacklisted_tools": ["handoff:billing"],
                "steps": [{"tool": "lookup"}],
            },
            0.0,
        ),
    ],
)
def test_a_scorer_names_a_handoff_as_handoff_colon_agent(
    config: dict[str, Any], value: float
) -> None:
    assert score(config, TRIAGE).value == value
    if config["type"] != "tool_calls":  # Agno's scorer has no Mastra mode
        assert score({**config, "compat": "mastra"}, TRIAGE).value == value


def test_a_sub_agents_handoff_counts_only_with_include_subagents() -> None:
    parent = run(call("lookup"), agent("triage", _handoff()))
    config = {"type": "tool_order", "tools": ["lookup", "handoff:billing"]}
    assert score(config, parent).value == 0.0
    assert score({**config, "include_subagents": True}, parent).value == 1.0


def test_an_explanation_names_the_handoff_like_a_call() -> None:
    result = score({"type": "tool_order", "tools": ["handoff:shipping"]}, TRIAGE)
    assert "calls: lookup, handoff:billing" in result.explanation


def _triage(variant: str) -> Trajectory:
    path = FRAMEWORKS / f"openai_agents_{variant}-handoff.otlp.json"
    spans = decode_json_request(json.loads(path.read_text("utf-8")), path.name).spans
    (triage,) = [t for t in build_trajectories(spans).trajectories if t.agent == "triage_agent"]
    return triage


@pytest.mark.parametrize("variant", ["otel", "openinference"])
@pytest.mark.parametrize(
    ("config", "value"),
    [
        ({"type": "max_tool_calls", "max": 0}, 1.0),
        ({"type": "used_no_tools"}, 1.0),
        ({"type": "tool_order", "tools": ["handoff:billing_agent"]}, 1.0),
        ({"type": "trajectory_accuracy", "steps": [{"tool": "handoff:billing_agent"}]}, 1.0),
    ],
)
def test_a_recorded_openai_agents_handoff_scores_the_same_under_both_instrumentations(
    variant: str, config: dict[str, Any], value: float
) -> None:
    assert score(config, _triage(variant)).value == value
