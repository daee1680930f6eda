"""`trajectory_accuracy`: Mastra's code trajectory accuracy scorer over the run's tool calls.

`steps` is the expected trajectory, `[{tool, args}]`; `ordering` is `strict` (position by
position; extra calls cost 0.5 x extra/expected), `relaxed` (the default: expected steps in
order, other calls may come between) or `unordered`. Value = matched expected steps / expected
steps, minus 0.1 per repeated tool when `allow_repeated_steps` is false.

tracescore's defaults, and what `compat: mastra` (Mastra 1.10.2) does instead:

- counted calls: clean executions only (`calls: clean`); Mastra counts every attempt;
- `args`: a subset of the call's top-level arguments by default (`args_match: subset`), or the
  whole arguments with `args_match: exact`, compared deeply and key-order-insensitively, with
  `true` never equal to `1`; Mastra compares `JSON.stringify` texts (key order matters);
- relaxed ordering: an optimal alignment (longest common subsequence), not Mastra's greedy
  scan: expected `[X, A, B]` against `[A, B, X]` is 2/3 here and 0.33 in Mastra; unordered
  uses a maximum matching rather than first fit;
- values are exact fractions; Mastra rounds to two decimals (`round2` with an epsilon).

An explicit `steps: []` means "expect no tool call" (1 when none was counted, else 0). A
missing `steps` is refused: Mastra then scores 0 with an error note, indistinguishable from
a real failure. Sub-agents' calls count only with `include_subagents: true`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from tracescore.model.deferred import Deferred
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory
from tracescore.scorers._calls import call_names
from tracescore.scorers._common import (
    ExpectationScorer,
    ToolName,
    uncounted_note_of,
)
from tracescore.scorers._compare import ArgsMatch, Comparison, Expected, Ordering, compare_named
from tracescore.scorers.base import Assessed, Outcome, outcome_of

__all__ = ["StepSpec", "TrajectoryAccuracy", "expectations", "prepare"]


class StepSpec(BaseModel):
    """One expected step: a tool call, optionally with arguments that must match."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: ToolName
    args: dict[str, Any] | None = None
    """Arguments the call must have (a subset by default; see `args_match`)."""


def prepare(steps: tuple[StepSpec, ...] | None) -> tuple[Expected, ...]:
    """Plain, precomputed expectations: the hot path never touches pydantic."""
    return tuple(Expected.of(s.tool, s.args) for s in steps or ())


def expectations(scorer: BaseModel) -> tuple[Expected, ...]:
    """The scorer's precomputed `_expected`, read without pydantic's slow `__getattr__`."""
    private = scorer.__pydantic_private__
    found: tuple[Expected, ...] = private.get("_expected", ()) if private is not None else ()
    return found


class TrajectoryAccuracy(ExpectationScorer):
    """Did the run's tool calls follow the expected trajectory?"""

    type: Literal["trajectory_accuracy"] = "trajectory_accuracy"
    steps: tuple[StepSpec, ...]
    """The expected tool calls; `[]` expects none."""
    ordering: Ordering = "relaxed"
    allow_repeated_steps: bool = True
    """False: 0.1 off for each tool called more than once."""
    args_match: ArgsMatch = "subset"
    """`subset`: the step's args are a subset of the call's; `exact`: all of them."""

    _expected: tuple[Expected, ...] = PrivateAttr(default=())

    def named_tools(self) -> tuple[str, ...]:
        """The expected steps' tools."""
        return tuple(s.tool for s in self.steps or ())

    def model_post_init(self, context: Any, /) -> None:
        """Precompute the expectations once per scorer."""
        super().model_post_init(context)
        self._expected = prepare(self.steps)

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """Compare the counted calls with `steps`; the explanation lists what did not match."""
        return outcome_of(self.assessor()(trajectory))

    def bound_score(self) -> Callable[[Trajectory], Score]:
        """`score` with the config read once (see `assessor`)."""
        return self.bound_assessed(self.assessor())

    def assessor(self) -> Callable[[Trajectory], Assessed]:
        """`evaluate`'s Outcome as a tuple, from a function with the config read once."""
        expected = expectations(self)
        tools = [e.tool for e in expected]
        expected_names = frozenset(tools)
        ordering, allow_repeated = self.ordering, self.allow_repeated_steps
        args_match, mastra = self.args_match, self.mastra
        counted, note_of = self.counter(), uncounted_note_of(self)
        lead = f"{ordering} ordering: "

        def assess(trajectory: Trajectory) -> Assessed:
            calls = counted(trajectory)
            names = call_names(calls)
            result = compare_named(
                calls, names, expected, expected_names, ordering, allow_repeated, args_match, mastra
            )
            if not expected:
                explanation = (
                    "expected no tool calls and none were counted"
                    if not calls
                    else f"expected no tool calls; counted: {', '.join(names)}"
                )
            else:
                explanation = lead + result.summary(mastra=mastra, allow_repeated=allow_repeated)
            note = note_of(trajectory, calls)
            if note:
                explanation += f" {note}."
            return result.score, explanation, None, Deferred(_details, result, names, tools)

        return assess


def _details(result: Comparison, names: tuple[str, ...], tools: list[str]) -> dict[str, Any]:
    """A score's details, built when read (`Score.details`)."""
    details = result.details()
    details["actual_step_names"] = list(names)
    details["expected_step_names"] = tools.copy()
    return details
