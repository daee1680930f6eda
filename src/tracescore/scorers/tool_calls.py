"""`tool_calls`: Agno's `ToolCallScorer` (agno 2.8.0), value = satisfied checks / checks.

Every name in `expected_tools` is one check, satisfied by at least one counted execution of
that tool (set semantics: naming a tool twice is still one check, and one call satisfies it
however often it is named). Every argument spec is one check of its own, satisfied by a counted
execution of that tool whose arguments contain the spec's top-level keys with equal values
(extra keys allowed). `allow_additional: false` fails `passed` (not `value`) when a counted
call went to a tool named nowhere in the config. Order and call counts are not checked.

Counted calls are clean executions (`calls: clean`, Agno's rule): an errored or paused call
satisfies nothing and, for the same reason, is never "additional". The reasons are Agno's own
strings (`expected tool 'charge_card' has no clean execution`, ...), so results can be compared
line for line. Two deliberate differences from Agno: argument values compare without Python's
`1 == True` (a boolean never equals a number), and a sub-agent's calls (Agno: a team member's)
can be counted with `include_subagents: true`; by default they are not, and a note says so.

Refused at construction, with Agno's messages: a bare string for `expected_tools`, an empty
spec list for a tool, and a scorer with neither expected tools nor argument specs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import field_validator, model_validator
from pydantic_core import PydanticCustomError

from tracescore.model.deferred import Deferred
from tracescore.model.score import Score
from tracescore.model.trajectory import Reading, Trajectory
from tracescore.scorers._calls import call_names, selector
from tracescore.scorers._common import ToolName, ToolScorer, subagent_tool_calls
from tracescore.scorers._matching import args_subset
from tracescore.scorers.base import Assessed, Outcome, outcome_of

__all__ = ["ToolCalls"]


class ToolCalls(ToolScorer):
    """Were the expected tools executed cleanly, with the expected arguments?"""

    type: Literal["tool_calls"] = "tool_calls"
    expected_tools: tuple[ToolName, ...] = ()
    """Tools that must each have at least one counted execution (duplicates collapse)."""
    arguments: dict[ToolName, tuple[dict[str, Any], ...]] | None = None
    """Per tool, one spec or a list of specs; each spec is its own check (subset match)."""
    allow_additional: bool = True
    """False: a counted call to a tool named nowhere in this config fails `passed`."""

    def named_tools(self) -> tuple[str, ...]:
        """`expected_tools` and the tools `arguments` names."""
        return self.expected_tools + tuple(self.arguments or ())

    @field_validator("expected_tools", mode="before")
    @classmethod
    def _not_a_bare_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise PydanticCustomError(
                "tool_names",
                "expected a list of tool names, got the bare string '{value}'",
                {"value": value},
            )
        return value

    @field_validator("expected_tools")
    @classmethod
    def _deduplicate(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(value))

    @field_validator("arguments", mode="before")
    @classmethod
    def _one_spec_or_many(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        out: dict[Any, Any] = {}
        for tool, specs in value.items():
            if isinstance(specs, Mapping):
                specs = [specs]
            elif isinstance(specs, list | tuple) and not specs:
                raise PydanticCustomError(
                    "empty_specs",
                    "argument specs for '{tool}' are empty; an empty list checks nothing",
                    {"tool": tool},
                )
            elif not isinstance(specs, list | tuple):
                raise PydanticCustomError(
                    "arg_specs",
                    "argument specs for '{tool}' must be a mapping or a list of mappings, "
                    "got {kind}",
                    {"tool": tool, "kind": type(specs).__name__},
                )
            out[tool] = specs
        return out

    @model_validator(mode="after")
    def _checks_something(self) -> ToolCalls:
        if not self.expected_tools and not self.arguments:
            raise ValueError(
                "tool_calls needs expected_tools and/or arguments; with neither there is no check"
            )
        return self

    def digest_payload(self) -> dict[str, Any]:
        """The config, with `expected_tools` sorted: their order never changes a score."""
        payload = super().digest_payload()
        payload["expected_tools"] = sorted(payload["expected_tools"])
        return payload

    def readings(self) -> frozenset[Reading]:
        """Tool arguments when argument specs are given; no other optional part."""
        return frozenset({"tool_arguments"}) if self.arguments else frozenset()

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """Count satisfied checks over the counted executions; see the module docstring."""
        return outcome_of(self.assessor()(trajectory))

    def bound_score(self) -> Callable[[Trajectory], Score]:
        """`score` with the config read once (see `assessor`)."""
        return self.bound_assessed(self.assessor())

    def assessor(self) -> Callable[[Trajectory], Assessed]:
        """`evaluate`'s Outcome as a tuple, from a function with the config read once: the
        checks' names and reasons are written here, per run only what the run decides."""
        kind = "clean" if self.calls == "clean" else "attempted"
        counted, sub = self.counter(), self.include_subagents
        attempted = selector("attempted", sub)
        allow_additional = self.allow_additional
        tools = [(n, f"expected tool '{n}' has no {kind} execution") for n in self.expected_tools]
        specs = [
            (
                tool,
                spec,
                f"{tool} {spec!r}",
                f"no {kind} '{tool}' execution matches arguments {spec!r}",
            )
            for tool, tool_specs in (self.arguments or {}).items()
            for spec in tool_specs
        ]
        allowed = frozenset(self.expected_tools) | frozenset(self.arguments or ())
        checks = len(tools) + len(specs)

        def assess(trajectory: Trajectory) -> Assessed:
            calls = counted(trajectory)
            counted_names = set(call_names(calls))
            counted_names.discard("")
            satisfied = 0
            notes: list[str] = []
            found: list[str] = []
            missing: list[str] = []
            unmatched: list[dict[str, Any]] = []
            for name, note in tools:
                if name in counted_names:
                    satisfied += 1
                    found.append(name)
                else:
                    missing.append(name)
                    notes.append(note)
            last, candidates = None, []
            for tool, spec, shown, note in specs:
                if tool != last:  # a tool's calls' arguments, once for all its specs
                    last = tool
                    candidates = [c.arguments for c in calls if c.name == tool]
                if any(args_subset(spec, args) for args in candidates):
                    satisfied += 1
                    found.append(shown)
                else:
                    unmatched.append({"tool": tool, "spec": spec})
                    notes.append(note)
            additional = sorted(counted_names - allowed)
            passed = satisfied == checks
            if not allow_additional and additional:
                passed = False
                notes.append(f"additional tool calls not allowed: {additional!r}")
            # `trajectory.tool_calls(...)`, from the run's memo (only its emptiness is read).
            if not attempted(trajectory):
                notes.insert(0, "run has no tool executions")
            hidden = 0 if sub else subagent_tool_calls(trajectory)
            if hidden:
                notes.append(
                    f"member tool executions were not inspected: {hidden} sub-agent call(s) "
                    "(set include_subagents: true to count them)"
                )
            reason = "; ".join(notes) or None
            explanation = f"{satisfied}/{checks} checks satisfied"
            if found:
                explanation += f"; satisfied: {', '.join(found)}"
            if reason:
                explanation += f"; {reason}"
            details = Deferred(
                _details, checks, satisfied, missing, unmatched, additional, counted_names, reason
            )
            return satisfied / checks, explanation, passed, details

        return assess


def _details(
    checks: int,
    satisfied: int,
    missing: list[str],
    unmatched: list[dict[str, Any]],
    additional: list[str],
    counted_names: set[str],
    reason: str | None,
) -> dict[str, Any]:
    """A score's details, built when read (`Score.details`)."""
    return {
        "checks": checks,
        "satisfied": satisfied,
        "missing": missing,
        "unmatched_arguments": unmatched,
        "additional": additional,
        "counted_tools": sorted(counted_names),
        "reason": reason,
    }
