"""Scored runs shared by the export tests: one of each kind of score a scorer can produce."""

from __future__ import annotations

from tracescore.model import Score, ToolCall, Trajectory
from tracescore.model.run_result import RunResult

__all__ = ["AGENT_SPAN", "TRACE", "scored_run"]

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
AGENT_SPAN = "00f067aa0ba902b7"


def scored_run(**overrides: object) -> RunResult:
    """A run with a failing, a passing, a labelled, an errored and an unscorable score."""
    trajectory = Trajectory(
        trace_id=TRACE,
        span_id=AGENT_SPAN,
        agent="support-bot",
        steps=(ToolCall("lookup_order"), ToolCall("refund", status="error")),
        resource={"service.name": "support", "deployment.environment": "prod"},
    )
    scores = (
        Score("tool_calls", "tool_calls", 0.5, False, "1 of 2 expected tools", "scorer-v1:aa",
              label="fail"),
        Score("budget", "step_budget", 1, True, "3 steps within 10", "scorer-v1:bb", label="pass"),
        Score("tone", "llm_judge", 0.8, None, "polite", "scorer-v1:cc", label="friendly"),
        Score("judge", "llm_judge", None, None, "scorer failed: TimeoutError: no answer",
              "scorer-v1:dd", error="TimeoutError: no answer"),
        Score("args", "tool_args", None, None, "no call to check", "scorer-v1:ee"),
    )  # fmt: skip
    fields: dict[str, object] = {
        "trajectory": trajectory,
        "scenario": "refunds",
        "scores": scores,
        "verdict": "scored",
        "digest": "scenario-v1:ff",
    }
    fields.update(overrides)
    return RunResult(**fields)  # type: ignore[arg-type]
