"""Quick checks, 0 or 1: Mastra's `checks.*` over the run's tool calls (the final output's,
`output_includes`, is in `output_includes`).

Call policy (see `_common`): the checks that look for calls (`called_tool`, `tool_order`) count
clean executions by default, so an errored call to the right tool does not pass them; the
prohibitions (`did_not_call`, `used_no_tools`, `max_tool_calls`) count every attempt, so a
forbidden call that errored still fails them; `no_tool_errors` sees every call and counts
status `error`, listing paused calls in its details without failing on them. Under
`compat: mastra` (Mastra 1.10.2) every check counts attempts, and `no_tool_errors` also fails
on paused calls (Mastra's state `call`) and on results carrying a truthy `error` field.

Refused at construction, because they could never fail or never pass: `times` below 1, a
negative `max`, an empty `tools` order, `no_tool_errors` with `calls: clean`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from tracescore import semconv
from tracescore.model.deferred import Deferred
from tracescore.model.score import Score
from tracescore.model.trajectory import Reading, ToolCall, Trajectory
from tracescore.scorers._calls import call_names, selector
from tracescore.scorers._common import (
    ExpectationScorer,
    ProhibitionScorer,
    ToolName,
    names,
    uncounted_note_of,
)
from tracescore.scorers.base import Details, Outcome, ScorerBase, built

__all__ = [
    "CalledTool",
    "DidNotCall",
    "MaxToolCalls",
    "NoToolErrors",
    "ToolOrder",
    "UsedNoTools",
]


# (passed, explanation, details) of a 0/1 check; `check` gives its details built.
_Checked = tuple[bool, str, Details]


class _Check(ScorerBase):
    """A 0/1 check: `check` says whether the run passed, why, and the details.

    Listed after the scorer's own base, so that the fields keep their order. `score` goes
    straight from `check` to the Score (`bound_score`): building an Outcome and copying its
    details was about a third of a simple check's cost. `evaluate` gives the same Outcome that
    `finish` turns into the same Score. A check is written once, as `checker`: a function with
    the config read once (a pydantic field is read through the model's `__getattr__` hook,
    several times slower than a local), which `check` makes per call and `bound_score` once.
    """

    def checker(self) -> Callable[[Trajectory], _Checked]:
        """`check` as a function of the run, with the config read once."""
        raise NotImplementedError

    def check(self, trajectory: Trajectory) -> tuple[bool, str, dict[str, Any]]:
        """Whether the run passed, the explanation and the details."""
        passed, explanation, details = self.checker()(trajectory)
        return passed, explanation, built(details)

    def readings(self) -> frozenset[Reading]:
        """None: the checks read tool names and statuses, and the final output."""
        return frozenset()

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """The check as an Outcome: value 1 or 0."""
        passed, explanation, details = self.check(trajectory)
        # Positional (value, explanation, passed, details): keyword arguments cost more than
        # the rest of building the record.
        return Outcome(1.0 if passed else 0.0, explanation, None, details)

    def score(self, trajectory: Trajectory) -> Score:
        """`ScorerBase.score` without the Outcome (same scores, same error scores)."""
        return self.bound_score()(trajectory)

    def bound_score(self) -> Callable[[Trajectory], Score]:
        """`score` with its digest, checker and the constants of both outcomes made once (the
        scorer is frozen; see `binary_constants`)."""
        check, error_score, digest = self.checker(), self.error_score, self.digest()
        name, kind, passes, fails, pass_label, fail_label = self.binary_constants()

        def score(trajectory: Trajectory) -> Score:
            try:
                passed, explanation, details = check(trajectory)
            except Exception as exc:  # a scorer bug must not take the pipeline down
                return error_score(f"{type(exc).__name__}: {exc}", digest)
            # `finish` of value 1 or 0, without the Outcome: `details`, made for this score
            # alone (or deferred), are kept rather than copied. Positional, in field order.
            if passed:
                return Score(name, kind, 1.0, passes, explanation, digest, pass_label, details)
            return Score(name, kind, 0.0, fails, explanation, digest, fail_label, details)

        return score


class CalledTool(ExpectationScorer, _Check):
    """1 when `tool` was called at least `times` times (Mastra `checks.calledTool`)."""

    type: Literal["called_tool"] = "called_tool"
    tool: ToolName
    times: int = Field(default=1, ge=1)

    def checker(self) -> Callable[[Trajectory], _Checked]:
        """Count the tool's counted calls."""
        counted, tool, times = self.counter(), self.tool, self.times
        note_of = uncounted_note_of(self)

        def check(trajectory: Trajectory) -> _Checked:
            calls = counted(trajectory)
            count = call_names(calls).count(tool)
            passed = count >= times
            explanation = f"'{tool}' was called {count} time(s); at least {times} expected"
            note = "" if passed else note_of(trajectory, calls)
            if note:
                explanation += f"; {note}"
            return (
                passed,
                explanation,
                {"tool": tool, "expected_times": times, "actual_count": count},
            )

        return check

    def named_tools(self) -> tuple[str, ...]:
        """`tool`."""
        return (self.tool,)


class ToolOrder(ExpectationScorer, _Check):
    """1 when `tools` were called in this order, others allowed between (`checks.toolOrder`)."""

    type: Literal["tool_order"] = "tool_order"
    tools: tuple[ToolName, ...] = Field(min_length=1)

    def named_tools(self) -> tuple[str, ...]:
        """`tools`."""
        return self.tools

    def checker(self) -> Callable[[Trajectory], _Checked]:
        """Scan the calls once, advancing through `tools` on each match."""
        counted, tools, note_of = self.counter(), self.tools, uncounted_note_of(self)
        want = " -> ".join(tools)

        def check(trajectory: Trajectory) -> _Checked:
            calls = counted(trajectory)
            actual = list(call_names(calls))
            pos = 0
            for name in actual:
                if pos < len(tools) and name == tools[pos]:
                    pos += 1
            passed = pos == len(tools)
            if passed:
                explanation = f"calls follow {want}; calls: {names(calls)}"
            else:
                after = f" after {' -> '.join(tools[:pos])}" if pos else ""
                explanation = (
                    f"calls do not follow {want}: '{tools[pos]}' not called{after}; "
                    f"calls: {names(calls)}"
                )
                note = note_of(trajectory, calls)
                if note:
                    explanation += f"; {note}"
            return passed, explanation, {"actual_tools": actual, "expected_order": list(tools)}

        return check


class DidNotCall(ProhibitionScorer, _Check):
    """1 when `tool` was never called (`checks.didNotCall`); attempts count by default."""

    type: Literal["did_not_call"] = "did_not_call"
    tool: ToolName

    def named_tools(self) -> tuple[str, ...]:
        """`tool`."""
        return (self.tool,)

    def checker(self) -> Callable[[Trajectory], _Checked]:
        """Count calls to the forbidden tool, whatever their status."""
        counted, tool = self.counter(), self.tool

        def check(trajectory: Trajectory) -> _Checked:
            hits = [c for c in counted(trajectory) if c.name == tool]
            if hits:
                statuses = ", ".join(c.status for c in hits)
                explanation = f"'{tool}' was called {len(hits)} time(s) (statuses: {statuses})"
            else:
                explanation = f"'{tool}' was not called"
            return not hits, explanation, {"tool": tool, "count": len(hits)}

        return check


class UsedNoTools(ProhibitionScorer, _Check):
    """1 when the run called no tool (`checks.usedNoTools`); a failed call is still tool use."""

    type: Literal["used_no_tools"] = "used_no_tools"

    def checker(self) -> Callable[[Trajectory], _Checked]:
        """Any counted call fails the check."""
        counted = self.counter()

        def check(trajectory: Trajectory) -> _Checked:
            calls = counted(trajectory)
            explanation = "no tool was called" if not calls else f"tools called: {names(calls)}"
            return not calls, explanation, {"count": len(calls)}

        return check


class MaxToolCalls(ProhibitionScorer, _Check):
    """1 when the run made at most `max` tool calls (`checks.maxToolCalls`)."""

    type: Literal["max_tool_calls"] = "max_tool_calls"
    max: int = Field(ge=0)

    def checker(self) -> Callable[[Trajectory], _Checked]:
        """Compare the number of counted calls with `max`."""
        select, most = selector(self.calls, self.include_subagents), self.max

        def check(trajectory: Trajectory) -> _Checked:
            calls = select(trajectory)
            count = len(calls)
            explanation = f"{count} tool call(s), at most {most} allowed: {names(calls)}"
            return count <= most, explanation, {"count": count, "max": most}

        return check


class NoToolErrors(ProhibitionScorer, _Check):
    """1 when no tool call failed (`checks.noToolErrors`); no calls at all passes."""

    type: Literal["no_tool_errors"] = "no_tool_errors"

    @model_validator(mode="after")
    def _sees_errors(self) -> NoToolErrors:
        if self.calls == "clean":
            raise ValueError("no_tool_errors with calls: clean would never see an errored call")
        return self

    def readings(self) -> frozenset[Reading]:
        """Tool results under `compat: mastra` (a result's `error` fails its call), else none."""
        return frozenset({"tool_results"}) if self.compat == "mastra" else frozenset()

    def checker(self) -> Callable[[Trajectory], _Checked]:
        """Count status `error` (and, under Mastra, paused calls and error results)."""
        select = selector(self.calls, self.include_subagents)
        mastra = self.compat == "mastra"

        def check(trajectory: Trajectory) -> _Checked:
            calls = select(trajectory)
            errored: list[ToolCall] = []
            paused: list[ToolCall] = []
            for c in calls:  # one loop for both lists: most calls are clean
                status = c.status
                if status != "ok":
                    if status == "error":
                        errored.append(c)
                    elif status == "paused":
                        paused.append(c)
            failed = errored
            if mastra:
                failed = [
                    c
                    for c in calls
                    if c.status != "ok"
                    or (isinstance(c.result, Mapping) and c.result.get(semconv.MASTRA_RESULT_ERROR))
                ]
            if failed:
                explanation = f"{len(failed)} of {len(calls)} tool call(s) failed: {names(failed)}"
            else:
                explanation = f"none of {len(calls)} tool call(s) failed"
            if paused and not mastra:
                explanation += f"; paused (not counted as errors): {names(paused)}"
            return not failed, explanation, Deferred(_error_details, failed, calls, errored, paused)

        return check


def _error_details(
    failed: list[ToolCall],
    calls: tuple[ToolCall, ...],
    errored: list[ToolCall],
    paused: list[ToolCall],
) -> dict[str, Any]:
    """`no_tool_errors`' details, built when read (`Score.details`)."""
    return {
        "error_count": len(failed),
        "total_calls": len(calls),
        "errored": [c.name for c in errored],
        "paused": [c.name for c in paused],
    }
