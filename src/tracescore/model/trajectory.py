"""A trajectory: one agent run rebuilt from its spans, as ordered steps.

Steps are tool calls, model calls, sub-agent runs and handoffs. A tool call's `status` says
whether it was a clean execution (`ok`), failed (`error`) or never ran to completion (`paused`:
requested but not executed, deferred, waiting for approval or denied). Scorers decide per policy
which calls count. A handoff is control passing from the run's agent to another agent (OpenAI
Agents SDK `transfer_to_<agent>`, an Agno team delegating to a member, Microsoft Agent
Framework's handoff tools): it is not a tool call, so no tool-call count or allow-list sees it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from functools import partial
from typing import Any, ClassVar, Literal, TypeAlias

from tracescore.model._record import record
from tracescore.model.span import AttrValue

__all__ = [
    "HANDOFF_PREFIX",
    "READINGS",
    "AgentStep",
    "Deferred",
    "Handoff",
    "ModelCall",
    "Reading",
    "Step",
    "ToolCall",
    "ToolStatus",
    "Trajectory",
]

ToolStatus: TypeAlias = Literal["ok", "error", "paused"]
TOOL_STATUSES: tuple[ToolStatus, ...] = ("ok", "error", "paused")

# Parts of a run a scorer may do without: a tool call's arguments and result, and a model
# call's model name and token counts. `serve` leaves the span attributes behind a part
# undecoded when no configured scorer reads it (`ScorerBase.readings`); the run then has None
# there (a result that may mark its call failed is still read for the call's status).
Reading: TypeAlias = Literal["tool_arguments", "tool_results", "model_usage"]
READINGS: frozenset[Reading] = frozenset(("tool_arguments", "tool_results", "model_usage"))


def _duration_ms(start_ns: int | None, end_ns: int | None) -> float | None:
    if start_ns is None or end_ns is None or not start_ns or not end_ns or end_ns < start_ns:
        return None
    return (end_ns - start_ns) / 1e6


class Deferred(partial[Any]):
    """A tool call's arguments or result, computed when first read: `Deferred(function, *args)`.

    The trajectory builder hands `ToolCall` its arguments and results as JSON text to parse
    later: most scorers never read them, and parsing every one was a large part of building a
    run. Reading the field computes the value once and stores it in place of the `Deferred`, so
    every reader (equality, hashing, repr, `to_dict`, pickling, `dataclasses.replace`) sees
    exactly the value that parsing up front gave. The function must not fail.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        # Two deferred values are the same when they would compute the same way (the builder's
        # views are compared in tests before any field is read).
        if not isinstance(other, Deferred):
            return NotImplemented
        return (self.func, self.args, self.keywords) == (other.func, other.args, other.keywords)

    def __hash__(self) -> int:
        return hash((self.func, self.args))


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

    @property
    def clean(self) -> bool:
        """True for a clean execution: it ran and did not fail."""
        return self.status == "ok"

    @property
    def duration_ms(self) -> float | None:
        """Execution time in milliseconds, when both ends were recorded."""
        return _duration_ms(self.start_ns, self.end_ns)

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


def _computed_on_read(cls: type, name: str) -> None:
    """Let field `name` of the slotted `cls` hold a `Deferred`, computed when first read."""
    slot = cls.__dict__[name]  # the slot's own descriptor, which reads and writes the value
    get, put = slot.__get__, slot.__set__

    def read(self: object) -> Any:
        value = get(self)
        if value.__class__ is Deferred:
            value = value()
            put(self, value)
        return value

    setattr(cls, name, property(read, put, slot.__delete__, slot.__doc__))


_computed_on_read(ToolCall, "arguments")
_computed_on_read(ToolCall, "result")


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
        return _duration_ms(self.start_ns, self.end_ns)

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
        return _duration_ms(self.start_ns, self.end_ns)

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


@record
class Trajectory:
    """One agent run: who ran, what was asked, what was answered, and the steps between."""

    trace_id: str
    span_id: str | None
    agent: str | None = None
    input: str | None = None
    output: str | None = None
    available_tools: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    start_ns: int | None = None
    end_ns: int | None = None
    complete: bool = True
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)
    resource: Mapping[str, AttrValue] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def duration_ms(self) -> float | None:
        """The agent run's wall time in milliseconds, when recorded."""
        return _duration_ms(self.start_ns, self.end_ns)

    def tool_calls(self, *, include_subagents: bool = False) -> tuple[ToolCall, ...]:
        """Tool calls in trajectory order; with `include_subagents`, sub-agents' calls inline."""
        # Lists, not generators, into tuple(): a generator resumes once per step.
        if not include_subagents:
            return tuple([s for s in self.steps if isinstance(s, ToolCall)])
        return tuple([s for s in _walk(self.steps) if isinstance(s, ToolCall)])

    def handoffs(self) -> tuple[Handoff, ...]:
        """The run's own handoffs, in order (a sub-agent's are in its own run)."""
        return tuple([s for s in self.steps if isinstance(s, Handoff)])

    def model_calls(self) -> tuple[ModelCall, ...]:
        """Model calls at any depth, sub-agents included (they spend the same budget)."""
        return tuple(s for s in _walk(self.steps) if isinstance(s, ModelCall))

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one line of `tracescore trajectories`."""
        return {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "agent": self.agent,
            "input": self.input,
            "output": self.output,
            "complete": self.complete,
            "available_tools": list(self.available_tools),
            "steps": [s.to_dict() for s in self.steps],
            "warnings": list(self.warnings),
        }


def _walk(steps: tuple[Step, ...]) -> Iterator[Step]:
    for step in steps:
        if isinstance(step, AgentStep):
            yield step
            yield from _walk(step.steps)
        else:
            yield step
