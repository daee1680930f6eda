"""Fields and helpers shared by the tool scorers: compat mode, call policy, sub-agents.

Which calls count is a per-scorer policy (`calls`, see `base.select_calls`):

- scorers that look for expected calls count only clean executions by default (`clean`):
  an errored or paused call never satisfies an expectation, because the tool did no work;
- prohibitions count every attempt by default (`attempted`): a forbidden call that errored
  was still made.

`compat: mastra` makes the expectation scorers count attempted calls too, as Mastra 1.10.2
does (its `extractToolCalls` keeps `result`, `call` and `output-error` invocations). An
explicit `calls` always wins. `include_subagents: false` (the default) keeps sub-agents' calls
out: a sub-agent run is a step of its own (`AgentStep`) and is scored as its own run.

Handoffs (`Handoff` steps: control passed to another agent) are not tool calls: no scorer
counts them, unless its config names one as `handoff:<agent>` where it takes a tool name
(`named_tools`). Then the run's handoffs join its counted calls in trajectory order, as
clean calls named `handoff:<agent>`, so `tool_order: [lookup, handoff:billing]` or a
`trajectory_accuracy` step `{tool: handoff:billing}` can require one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import StringConstraints, model_validator

from tracescore.model.trajectory import (
    HANDOFF_PREFIX,
    AgentStep,
    Handoff,
    Step,
    ToolCall,
    Trajectory,
)
from tracescore.scorers._calls import has_subagents, selector
from tracescore.scorers.base import CallPolicy, ScorerBase

__all__ = [
    "Compat",
    "ExpectationScorer",
    "ProhibitionScorer",
    "ToolName",
    "ToolScorer",
    "names",
    "subagent_tool_calls",
    "uncounted_note_of",
    "with_handoffs",
]

# `tracescore`: the documented defaults. `mastra`: Mastra 1.10.2's exact semantics.
Compat: TypeAlias = Literal["tracescore", "mastra"]
# A tool name in a config: an empty name can never match a call.
ToolName: TypeAlias = Annotated[str, StringConstraints(min_length=1)]


class ToolScorer(ScorerBase):
    """A scorer of a run's tool calls (not registered: a base for the concrete scorers)."""

    calls: CallPolicy = "clean"
    """`clean`: only calls that ran without error; `attempted`: every call made."""
    include_subagents: bool = False
    """Count sub-agents' tool calls as if the run had made them."""

    def counted(self, trajectory: Trajectory) -> tuple[ToolCall, ...]:
        """The calls this scorer counts, in trajectory order (with the run's handoffs, as
        `handoff:<agent>` calls, when the config names one)."""
        return self.counter()(trajectory)

    def counter(self) -> Callable[[Trajectory], tuple[ToolCall, ...]]:
        """`counted` as a function of the run, with the config read once (for a scorer's
        bound form: a field is read through pydantic's `__getattr__` hook)."""
        sub = self.include_subagents
        select = selector(self.calls, sub)
        if not self.names_handoffs:
            return select
        return lambda trajectory: with_handoffs(trajectory, select(trajectory), sub)

    def named_tools(self) -> tuple[str, ...]:
        """The tool names the config expects or forbids (each scorer lists its fields)."""
        return ()

    @cached_property
    def names_handoffs(self) -> bool:
        """True when the config names a handoff (`handoff:<agent>`) as a tool."""
        return any(name.startswith(HANDOFF_PREFIX) for name in self.named_tools())


def with_handoffs(
    trajectory: Trajectory, calls: tuple[ToolCall, ...], include_subagents: bool
) -> tuple[ToolCall, ...]:
    """`calls` with the run's handoffs among them, in trajectory order, each as a clean call
    named `handoff:<agent>` (sub-agents' too with `include_subagents`)."""
    kept = {id(c) for c in calls}
    out: list[ToolCall] = []

    def walk(steps: tuple[Step, ...]) -> None:
        for step in steps:
            if isinstance(step, ToolCall):
                if id(step) in kept:
                    out.append(step)
            elif isinstance(step, Handoff):
                out.append(
                    ToolCall(
                        name=step.name,
                        call_id=step.call_id,
                        arguments=step.arguments,
                        span_id=step.span_id,
                        start_ns=step.start_ns,
                        end_ns=step.end_ns,
                    )
                )
            elif include_subagents and isinstance(step, AgentStep):
                walk(step.steps)

    walk(trajectory.steps)
    return tuple(out)


class ExpectationScorer(ToolScorer):
    """A Mastra-family scorer that looks for expected calls: by default clean executions only."""

    compat: Compat = "tracescore"
    """`mastra` reproduces Mastra 1.10.2 exactly; `tracescore` applies the documented rules."""

    @model_validator(mode="before")
    @classmethod
    def _mastra_counts_attempts(cls, data: Any) -> Any:
        # Filled in before validation so the digest of `compat: mastra` is the same whether or
        # not `calls: attempted` is spelled out.
        if isinstance(data, Mapping) and "calls" not in data and data.get("compat") == "mastra":
            return {**data, "calls": "attempted"}
        return data

    @property
    def mastra(self) -> bool:
        """True under `compat: mastra`."""
        return self.compat == "mastra"


class ProhibitionScorer(ExpectationScorer):
    """A Mastra-family scorer that forbids calls: by default every attempt counts."""

    calls: CallPolicy = "attempted"
    """`attempted` (default): a forbidden call that failed was still made; `clean`: ran only."""


def names(calls: Iterable[ToolCall]) -> str:
    """`a, b, c`, or `none`, for explanations."""
    # A comprehension, not map(attrgetter): the comprehension's specialized slot read costs a
    # tenth of attrgetter's generic attribute lookup.
    return ", ".join([c.name for c in calls]) or "none"


def subagent_tool_calls(trajectory: Trajectory) -> int:
    """How many tool calls sub-agents made (at any depth) that the run's own list leaves out."""
    if not has_subagents(trajectory):  # no walk
        return 0

    def walk(steps: tuple[Step, ...], inside: bool) -> int:
        total = 0
        for step in steps:
            if isinstance(step, AgentStep):
                total += walk(step.steps, True)
            elif inside and isinstance(step, ToolCall):
                total += 1
        return total

    return walk(trajectory.steps, False)


def uncounted_note_of(scorer: ToolScorer) -> Callable[[Trajectory, tuple[ToolCall, ...]], str]:
    """The note on the calls `scorer`'s policy left out, as a function of the run and the calls
    it counted: `not counted (calls: clean): x (error), y (paused)`, or an empty string.

    Says why a call the user can see in the trace did not satisfy an expectation. The scorer's
    config is read once, here, for its bound form.
    """
    every_of = selector("attempted", scorer.include_subagents)
    clean_of = selector("clean", scorer.include_subagents)
    names_handoffs = scorer.names_handoffs

    def note_of(trajectory: Trajectory, counted: tuple[ToolCall, ...]) -> str:
        global _last_note  # a one-entry memo, see below
        every = every_of(trajectory)
        if len(every) == len(counted) and not names_handoffs:
            return ""
        memo = _last_note
        if memo is not None and memo[0] is counted and memo[1] is every:
            return memo[2]
        if counted is clean_of(trajectory):
            # The clean ones of `every`, the same objects: the rest are those not ok.
            left = [f"{c.name} ({c.status})" for c in every if c.status != "ok"]
        else:
            kept = {id(c) for c in counted}
            left = [f"{c.name} ({c.status})" for c in every if id(c) not in kept]
        note = f"not counted (calls: clean): {', '.join(left)}"
        _last_note = (counted, every, note)
        return note

    return note_of


# The last note, with the two tuples it was written from (kept, so their ids are not reused
# meanwhile): the scorers of a scenario that count the same calls ask one after another.
_last_note: tuple[tuple[ToolCall, ...], tuple[ToolCall, ...], str] | None = None
