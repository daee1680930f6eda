"""Hand-built trajectories for scorer tests: terse constructors, real model objects."""

from __future__ import annotations

from typing import Any

from tracescore.config.scorers import parse_scorer
from tracescore.model import AgentStep, ModelCall, Score, Step, ToolCall, ToolStatus, Trajectory

__all__ = ["agent", "call", "calls", "model", "run", "score", "unreadable_call"]

MS = 1_000_000  # nanoseconds per millisecond


def call(
    name: str,
    args: Any = None,
    status: ToolStatus = "ok",
    *,
    result: Any = None,
    pause_reason: str | None = None,
    duration_ms: int | None = None,
) -> ToolCall:
    """One tool call; `status` ok / error / paused as the trajectory builder records it."""
    start = 1_000 * MS if duration_ms is not None else None
    end = start + duration_ms * MS if start is not None and duration_ms is not None else None
    if status == "paused" and pause_reason is None:
        pause_reason = "no_execution"
    return ToolCall(
        name=name,
        call_id=f"call_{name}",
        arguments=args,
        result=result,
        status=status,
        error_type="ToolError" if status == "error" else None,
        pause_reason=pause_reason,
        start_ns=start,
        end_ns=end,
    )


def calls(*names: str) -> tuple[ToolCall, ...]:
    """Clean calls without arguments, in this order."""
    return tuple(call(n) for n in names)


def model(input_tokens: int | None, output_tokens: int | None, name: str = "gpt") -> ModelCall:
    """A model call with its token usage (None: not recorded)."""
    return ModelCall(model=name, input_tokens=input_tokens, output_tokens=output_tokens)


def agent(name: str, *steps: Step) -> AgentStep:
    """A sub-agent run with its own steps."""
    return AgentStep(name=name, steps=tuple(steps))


def run(
    *steps: Step,
    input: str | None = "What is the weather?",
    output: str | None = "done",
    duration_ms: float | None = None,
) -> Trajectory:
    """One agent run; `duration_ms` None leaves the run's duration unrecorded."""
    start = 10_000 * MS if duration_ms is not None else None
    end = start + int(duration_ms * MS) if start is not None and duration_ms is not None else None
    return Trajectory(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        agent="support-agent",
        input=input,
        output=output,
        steps=tuple(steps),
        start_ns=start,
        end_ns=end,
    )


def score(config: dict[str, Any], trajectory: Trajectory) -> Score:
    """Build the scorer from its config mapping, as a config file would, and score the run."""
    return parse_scorer(config).score(trajectory)


class _UnreadableStatus(str):
    """A status whose every comparison raises (how a scorer copes with odd values)."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("unreadable status")

    __hash__ = str.__hash__


def unreadable_call(name: str) -> ToolCall:
    """A clean call whose status raises RuntimeError("unreadable status") when compared."""
    odd = call(name)
    object.__setattr__(odd, "status", _UnreadableStatus("ok"))
    return odd
