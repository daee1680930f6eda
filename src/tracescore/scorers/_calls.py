"""Which of a run's tool calls a scorer counts (`select_calls`), and their names, memoized
per run: the scorers of a scenario, and then the run's metrics, ask about the same run one
after another."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

from tracescore.model.trajectory import AgentStep, ToolCall, Trajectory

__all__ = ["CallPolicy", "call_names", "has_subagents", "select_calls", "selector"]

# Which tool calls a scorer counts. `clean`: only clean executions (status ok).
# `attempted`: every call the agent made, ok, errored or paused (Mastra's rule).
CallPolicy: TypeAlias = Literal["clean", "attempted"]


def select_calls(
    trajectory: Trajectory, policy: CallPolicy, include_subagents: bool = False
) -> tuple[ToolCall, ...]:
    """The trajectory's tool calls that count under `policy`, in trajectory order (the step
    objects themselves); with `include_subagents`, the sub-agents' calls too."""
    return selector(policy, include_subagents)(trajectory)


def selector(
    policy: CallPolicy, include_subagents: bool = False
) -> Callable[[Trajectory], tuple[ToolCall, ...]]:
    """`select_calls` with its policy bound, for a scorer's bound form and the metrics: the
    policy's slot in the memo is found once, not per run."""
    return _SELECTORS[2 * include_subagents + (policy == "clean")]


def _selector(slot: int) -> Callable[[Trajectory], tuple[ToolCall, ...]]:
    """`select_calls` for the memo's slot `slot` (2 * include_subagents + clean)."""
    clean, include_subagents = slot & 1, slot >= 2

    def select(trajectory: Trajectory) -> tuple[ToolCall, ...]:
        global _last_run  # a one-entry memo, see below
        memo = _last_run
        if memo is not None and memo[0] is trajectory:
            slots = memo[1]
            calls = slots[slot]
            if calls is not None:
                return calls
        else:
            slots = [None, None, None, None]
            _last_run = (trajectory, slots)
        # The slots another answer derives from are read here rather than asked again: a
        # call costs more than the rest of a memo hit.
        if include_subagents and not (
            trajectory.has_subagents  # `has_subagents`, without the call when known
            if trajectory.has_subagents is not None
            else has_subagents(trajectory)
        ):  # no sub-agents: the same calls as without them, the same tuple
            calls = slots[slot - 2]
            if calls is None:
                calls = _SELECTORS[slot - 2](trajectory)
        elif clean:
            every = slots[slot - 1]
            if every is None:
                every = _SELECTORS[slot - 1](trajectory)
            calls = tuple([c for c in every if c.status == "ok"])
            if len(calls) == len(every):
                # All clean: the same tuple, so that what is remembered per tuple (`call_names`)
                # is shared by the scorers of either policy.
                calls = every
        elif include_subagents:
            calls = trajectory.tool_calls(include_subagents=True)
        else:  # `trajectory.tool_calls()`, without the call (and the type test as above)
            calls = tuple([s for s in trajectory.steps if type(s) is ToolCall])
        slots[slot] = calls
        return calls

    return select


# Per slot of the memo: attempted, clean, attempted with sub-agents, clean with them.
_SELECTORS = tuple(_selector(slot) for slot in range(4))
# The calls of the last run asked about, in a slot per (include_subagents, policy): the
# scorers of a scenario, and then the run's metrics, ask about the same run one after another,
# and walking its steps was a third of a simple check's cost. Keyed by identity: runs are
# immutable records. Threads may race on it harmlessly (a lost entry is only computed again).
_last_run: tuple[Trajectory, list[tuple[ToolCall, ...] | None]] | None = None


def call_names(calls: tuple[ToolCall, ...]) -> tuple[str, ...]:
    """The names of `calls`, in order. Remembered for the last tuple asked about: the scorers
    of a scenario read the names of the same counted calls (`select_calls`' tuples) one after
    another, and a memo hit costs a fifth of listing seven names again."""
    global _last_names
    memo = _last_names
    if memo is not None and memo[0] is calls:
        return memo[1]
    names = tuple([c.name for c in calls])
    _last_names = (calls, names)  # the tuple is kept, so its id is not reused meanwhile
    return names


_last_names: tuple[tuple[ToolCall, ...], tuple[str, ...]] | None = None


def has_subagents(trajectory: Trajectory) -> bool:
    """Whether the run has a sub-agent step: the builder's flag, else read from the steps and
    remembered for the last run asked about (the scorers that note uncounted sub-agent calls,
    and then the run's metrics, ask in turn)."""
    global _last_subagents
    known = trajectory.has_subagents
    if known is not None:
        return known
    memo = _last_subagents
    if memo is not None and memo[0] is trajectory:
        return memo[1]
    # Steps are exactly ToolCall, ModelCall, Handoff or AgentStep, so the type test is
    # isinstance's, looped in C.
    found = AgentStep in map(type, trajectory.steps)
    _last_subagents = (trajectory, found)
    return found


_last_subagents: tuple[Trajectory, bool] | None = None
