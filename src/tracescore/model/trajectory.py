"""A trajectory: one agent run rebuilt from its spans, as ordered steps.

The steps (tool calls, model calls, sub-agent runs and handoffs) are `model/steps.py`, and
re-exported here; scorers decide per policy which tool calls count.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any, Literal, TypeAlias

from tracescore.model._record import record
from tracescore.model.deferred import Deferred
from tracescore.model.span import AttrValue
from tracescore.model.steps import (
    HANDOFF_PREFIX,
    AgentStep,
    Handoff,
    ModelCall,
    Step,
    ToolCall,
    ToolStatus,
    elapsed_ms,
)

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

# Parts of a run a scorer may do without: a tool call's arguments and result, and a model
# call's model name and token counts. `serve` leaves the span attributes behind a part
# undecoded when no configured scorer reads it (`ScorerBase.readings`); the run then has None
# there (a result that may mark its call failed is still read for the call's status).
Reading: TypeAlias = Literal["tool_arguments", "tool_results", "model_usage"]
READINGS: frozenset[Reading] = frozenset(("tool_arguments", "tool_results", "model_usage"))


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
    has_subagents: bool | None = field(default=None, compare=False, repr=False)
    """Whether a step is a sub-agent run (`AgentStep`), as the builder knows it; None when not
    known (then `steps` are read). Not compared: a fact about `steps`, not more of the run."""

    @property
    def duration_ms(self) -> float | None:
        """The agent run's wall time in milliseconds, when recorded."""
        return elapsed_ms(self.start_ns, self.end_ns)

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
