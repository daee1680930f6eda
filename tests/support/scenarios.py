"""Runs, scenarios and scores for the scenario and summary tests."""

from __future__ import annotations

from typing import Any

from tracescore.config import Scenario
from tracescore.model import Score, ToolCall, Trajectory
from tracescore.scorers.base import Outcome, ScorerBase

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def run(
    *calls: tuple[str, str],
    agent: str | None = "support-agent",
    user_input: str | None = "where is my order?",
    trace_id: str = TRACE,
    attributes: dict[str, Any] | None = None,
    resource: dict[str, Any] | None = None,
) -> Trajectory:
    """A run with tool calls given as (name, status)."""
    steps = tuple(
        ToolCall(name=name, status=status, call_id=f"c{i}")  # type: ignore[arg-type]
        for i, (name, status) in enumerate(calls)
    )
    return Trajectory(
        trace_id=trace_id,
        span_id="00f067aa0ba902b7",
        agent=agent,
        input=user_input,
        steps=steps,
        attributes=attributes or {},
        resource=resource or {},
    )


def scenario(**fields: Any) -> Scenario:
    return Scenario.model_validate({"name": "s", **fields})


def entry(s: Scenario, name: str) -> ScorerBase:
    return next(e for e, _ in s.entries if e.score_name == name)


def value(s: Scenario, name: str, v: float | None, passed: bool | None = None) -> Score:
    """The score an entry gives for value `v` (its threshold applied, as scoring does)."""
    e = entry(s, name)
    return e.finish(Outcome(value=v, explanation=f"value {v}", passed=passed), e.digest())


def error(s: Scenario, name: str) -> Score:
    return entry(s, name).error_score("RuntimeError: boom")
