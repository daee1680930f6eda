"""A trajectory as plain text for a judge: the whole run, sub-agents included.

Every tool call gets a number (`call 3`) in trajectory order, sub-agents' calls included and
indented under their agent, so a judge can answer per call and the scorer can check it answered
for each. Errored and paused calls are shown with their status, never hidden or shown as clean.
Model calls are left out: they are the agent thinking, not acting.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tracescore.judges.sanitize import truncate_middle
from tracescore.model.trajectory import AgentStep, Handoff, Step, ToolCall, Trajectory

__all__ = ["WITHHELD", "NumberedCall", "RenderedRun", "render_run", "withhold"]

WITHHELD = "[withheld from the judge by judge_fields]"


class FieldPolicy(Protocol):
    """What `withhold` needs from `judges.settings.JudgeFields` (kept structural: no import)."""

    def hides(self, field: str, tool: str | None = None) -> bool: ...


@dataclass(frozen=True, slots=True)
class NumberedCall:
    """A tool call with the number it has in the rendering and its sub-agent depth."""

    number: int
    call: ToolCall
    depth: int


@dataclass(frozen=True, slots=True)
class RenderedRun:
    """The run as text, and the numbered calls it shows."""

    text: str
    calls: tuple[NumberedCall, ...]


def withhold(trajectory: Trajectory, policy: FieldPolicy) -> Trajectory:
    """The trajectory with the fields a scenario's `judge_fields` excludes replaced by a marker.

    The marker (not an empty value) tells the judge the field exists but was not shown, so it
    does not judge a call as having no arguments.
    """
    steps = _withhold_steps(trajectory.steps, policy)
    return replace(
        trajectory,
        input=WITHHELD
        if policy.hides("input") and trajectory.input is not None
        else trajectory.input,
        output=WITHHELD
        if policy.hides("output") and trajectory.output is not None
        else trajectory.output,
        steps=steps,
    )


def _withhold_steps(steps: tuple[Step, ...], policy: FieldPolicy) -> tuple[Step, ...]:
    out: list[Step] = []
    for step in steps:
        if isinstance(step, AgentStep):
            out.append(replace(step, steps=_withhold_steps(step.steps, policy)))
        elif isinstance(step, ToolCall):
            changes: dict[str, Any] = {}
            if step.arguments is not None and policy.hides("arguments", step.name):
                changes["arguments"] = WITHHELD
            if step.result is not None and policy.hides("results", step.name):
                changes["result"] = WITHHELD
            if step.error_message is not None and policy.hides("errors", step.name):
                changes["error_message"] = WITHHELD
            out.append(replace(step, **changes) if changes else step)
        else:
            out.append(step)
    return tuple(out)


def render_run(
    trajectory: Trajectory,
    *,
    value_limit: int = 4000,
    include_output: bool = True,
) -> RenderedRun:
    """The run: agent, user request, numbered steps, final answer (each value capped)."""
    lines: list[str] = []
    if trajectory.agent:
        lines.append(f"agent: {trajectory.agent}")
    lines.append("user request:")
    lines.append(_indent(_value(trajectory.input, value_limit) or "(none recorded)", 1))
    lines.append("steps:")
    calls: list[NumberedCall] = []
    body = list(_steps(trajectory.steps, 1, calls, value_limit))
    lines.extend(body or ["  (no tool calls or sub-agents)"])
    if include_output:
        lines.append("final answer:")
        lines.append(_indent(_value(trajectory.output, value_limit) or "(none recorded)", 1))
    return RenderedRun("\n".join(lines), tuple(calls))


def _steps(
    steps: tuple[Step, ...], depth: int, calls: list[NumberedCall], limit: int
) -> Iterator[str]:
    pad = "  " * depth
    for step in steps:
        if isinstance(step, ToolCall):
            number = len(calls) + 1
            calls.append(NumberedCall(number, step, depth - 1))
            yield f"{pad}[call {number}] tool {step.name!r}: {_status(step)}"
            if step.arguments is not None:
                yield f"{pad}  arguments: {_value(step.arguments, limit)}"
            if step.result is not None:
                yield f"{pad}  result: {_value(step.result, limit)}"
            if step.error_message:
                yield f"{pad}  error: {_value(step.error_message, limit)}"
        elif isinstance(step, Handoff):
            yield f"{pad}[handoff] control passed to agent {step.target!r}"
        elif isinstance(step, AgentStep):
            yield f"{pad}[sub-agent] {step.name!r} ran these steps:"
            inner = list(_steps(step.steps, depth + 1, calls, limit))
            yield from inner or [f"{pad}  (no tool calls)"]


def _status(call: ToolCall) -> str:
    if call.status == "ok":
        return "completed"
    if call.status == "error":
        kind = f" ({call.error_type})" if call.error_type else ""
        return f"FAILED{kind}"
    reason = f" ({call.pause_reason})" if call.pause_reason else ""
    return f"NOT EXECUTED, paused{reason}"


def _value(value: Any, limit: int) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
        except ValueError:  # circular structures cannot come from JSON, but be safe
            text = repr(value)
    return truncate_middle(text, limit)


def _indent(text: str, depth: int) -> str:
    pad = "  " * depth
    return "\n".join(pad + line for line in text.splitlines() or [""])
