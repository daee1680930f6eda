"""The steps of a trajectory: tool calls, model calls, sub-agent runs and handoffs.

A tool call's `status` says whether it was a clean execution (`ok`), failed (`error`) or never
ran to completion (`paused`: requested but not executed, deferred, waiting for approval or
denied). A handoff is control passing from the run's agent to another agent (OpenAI Agents SDK
`transfer_to_<agent>`, an Agno team delegating to a member, Microsoft Agent Framework's handoff
tools): it is not a tool call, so no tool-call count or allow-list sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from tracescore.model._record import record
from tracescore.model.deferred import computed_on_read

__all__ = [
    "HANDOFF_PREFIX",
    "TOOL_STATUSES",
    "AgentStep",
    "Handoff",
    "ModelCall",
    "Step",
    "ToolCall",
    "ToolStatus",
    "elapsed_ms",
]

ToolStatus: TypeAlias = Literal["ok", "error", "paused"]
TOOL_STATUSES: tuple[ToolStatus, ...] = ("ok", "error", "paused")


def elapsed_ms(start_ns: int | None, end_ns: int | None) -> float | None:
    """Milliseconds between two recorded times; None when either is missing or out of order."""
    if start_ns is None or end_ns is None or not start_ns or not end_ns or end_ns < start_ns:
        return None
    return (end_ns - start_ns) / 1e6


@record
class ToolCall:
    """One tool call: requested by a model, executed by a tool span, or both."""

    kind: ClassVar[str] = "tool_call"

    name: str
    call_id: str | None = None
    arguments: Any = None
    result: Any = None
    status: ToolStatus = "ok"
    error_type: str | None = None
    error_message: str | None = None
    pause_reason: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    span_id: str | None = None
    agent: str | None = None

    if not TYPE_CHECKING:  # (the type checker reads the fields above as the signature)

        def __init__(
            self,
            name: str,
            call_id: str | None = None,
            arguments: Any = None,
            result: Any = None,
            status: ToolStatus = "ok",
            error_type: str | None = None,
            error_message: str | None = None,
            pause_reason: str | None = None,
            start_ns: int | None = None,
            end_ns: int | None = None,
            span_id: str | None = None,
            agent: str | None = None,
        ) -> None:
            # The generated `__init__`, written out (one runs per tool call) to store
            # `arguments` and `result` in their slots directly, not through their
            # `computed_on_read` properties (970 -> 700 ns a ToolCall). A field added above
            # must be added here too (tests/test_model.py compares both).
            self.name = name
            self.call_id = call_id
            self._stored_arguments = arguments
            self._stored_result = result
            self.status = status
            self.error_type = error_type
            self.error_message = error_message
            self.pause_reason = pause_reason
            self.start_ns = start_ns
            self.end_ns = end_ns
            self.span_id = span_id
            self.agent = agent

    @property
    def clean(self) -> bool:
        """True for a clean execution: it ran and did not fail."""
        return self.status == "ok"

    @property
    def duration_ms(self) -> float | None:
        """Execution time in milliseconds, when both ends were recorded."""
        return elapsed_ms(self.start_ns, self.end_ns)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `tracescore trajectories`."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "call_id": self.call_id,
            "arguments": self.arguments,
            "result": self.result,
            "status": self.status,
            "error_type": self.error_type,
            "span_id": self.span_id,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
        }
        if self.error_message is not None:
            out["error_message"] = self.error_message
        if self.pause_reason is not None:
            out["pause_reason"] = self.pause_reason
        return out


computed_on_read(ToolCall, "arguments", stored_as="_stored_arguments")
computed_on_read(ToolCall, "result", stored_as="_stored_result")


@record
class ModelCall:
    """One model (chat / LLM) call with its token usage."""

    kind: ClassVar[str] = "model_call"

    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    span_id: str | None = None

    @property
    def duration_ms(self) -> float | None:
        """Call time in milliseconds, when both ends were recorded."""
        return elapsed_ms(self.start_ns, self.end_ns)

    @property
    def total_tokens(self) -> int | None:
        """Input plus output tokens, or None unless both were recorded."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `tracescore trajectories`."""
        return {
            "kind": self.kind,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "duration_ms": self.duration_ms,
            "span_id": self.span_id,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
        }


@record
class AgentStep:
    """A sub-agent run inside the parent's trajectory, with the sub-agent's own steps."""

    kind: ClassVar[str] = "agent"

    name: str
    span_id: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    steps: tuple[Step, ...] = ()

    @property
    def duration_ms(self) -> float | None:
        """Run time in milliseconds, when both ends were recorded."""
        return elapsed_ms(self.start_ns, self.end_ns)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `tracescore trajectories`."""
        return {
            "kind": self.kind,
            "name": self.name,
            "span_id": self.span_id,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
        }


@record
class Handoff:
    """Control passed from this run's agent to agent `target` (which runs as a run of its own).

    `call_id` is the id of the model's call that asked for it, when recorded; `tool_name` the
    name the model called it by (`transfer_to_billing_agent`), when known; `arguments` what it
    passed along (an Agno delegation's task), None when nothing (an empty object included).
    Scorers name a handoff as `handoff:<target>` (`HANDOFF_PREFIX`) wherever they take a tool
    name.
    """

    kind: ClassVar[str] = "handoff"

    target: str
    call_id: str | None = None
    tool_name: str | None = None
    arguments: Any = None
    start_ns: int | None = None
    end_ns: int | None = None
    span_id: str | None = None

    @property
    def name(self) -> str:
        """`handoff:<target>`: how scorers' expected steps name this handoff."""
        return HANDOFF_PREFIX + self.target

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `tracescore trajectories`."""
        return {
            "kind": self.kind,
            "target": self.target,
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "arguments": self.arguments,
            "span_id": self.span_id,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
        }


HANDOFF_PREFIX = "handoff:"
"""Scorers' name for a handoff step: `handoff:<target agent>`."""

Step: TypeAlias = ToolCall | ModelCall | AgentStep | Handoff
