"""`tool_call_accuracy`: Mastra's code tool-call accuracy scorer, 0 or 1.

Mastra's `createToolCallAccuracyScorerCode({expectedTool, strictMode, expectedToolOrder})`:

- one tool: 1 when `expected_tool` was called; with `strict_mode`, only when it was the one
  and only call (called twice, or alongside anything else, is 0);
- an order: 1 when the calls follow `expected_tool_order`; with `strict_mode` the calls must be
  exactly that sequence; no call at all is always 0.

Where tracescore's default semantics differ from Mastra 1.10.2 (`compat: mastra` restores it):

- only clean executions count (`calls: clean`): an errored or paused call did no work, so it
  does not show the tool was "called correctly"; Mastra counts attempts;
- relaxed order means "the expected order is a subsequence of the calls". Mastra compares the
  FIRST occurrence of each expected tool, so calls `[b, a, b]` fail order `[a, b]` and an order
  that names a tool twice (`[a, a]`) can never pass;
- Mastra throws on a run without a user message or without any assistant message; tracescore
  scores the calls anyway (tool calls are recorded whether or not message content was captured).
  Under `compat: mastra` it throws as Mastra does: when the run has no input, or has neither a
  final text nor any tool call (Mastra's run output is every assistant message of the run, the
  ones carrying tool invocations included, so a run that stopped for an approval, ended in an
  error or wrote no text after its calls is scored). One case a trace cannot tell apart: a model
  that answered with empty text and no call gives Mastra an empty assistant message (scored 0);
  tracescore sees no answer and throws.

Refused at construction: neither `expected_tool` nor `expected_tool_order` (nothing to check),
both at once (Mastra silently ignores `expected_tool` then), and an empty order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import model_validator

from tracescore.errors import ScorerError
from tracescore.model.deferred import Deferred
from tracescore.model.score import Score
from tracescore.model.trajectory import Reading, Trajectory
from tracescore.scorers._calls import call_names
from tracescore.scorers._common import (
    ExpectationScorer,
    ToolName,
    uncounted_note_of,
)
from tracescore.scorers.base import Assessed, Outcome, outcome_of

__all__ = ["ToolCallAccuracy"]


def _first_occurrences_in_order(actual: Sequence[str], order: Sequence[str]) -> bool:
    # Mastra: the first index of each expected tool must strictly increase.
    last = -1
    for tool in order:
        try:
            index = actual.index(tool)
        except ValueError:
            return False
        if index <= last:
            return False
        last = index
    return True


def _is_subsequence(actual: list[str], order: Sequence[str]) -> bool:
    # Greedy matching is optimal for "is a subsequence of": each tool at its first place after
    # the last one's (`list.index` scans in C; two nested generators cost more than the rest
    # of scoring the order).
    start = 0
    for tool in order:
        try:
            start = actual.index(tool, start) + 1
        except ValueError:
            return False
    return True


def _is_sequence(actual: list[str], order: Sequence[str]) -> bool:
    return actual == list(order)


class ToolCallAccuracy(ExpectationScorer):
    """Did the agent call the expected tool (or tools, in order)?"""

    type: Literal["tool_call_accuracy"] = "tool_call_accuracy"
    expected_tool: ToolName | None = None
    """The tool that must be called."""
    expected_tool_order: tuple[ToolName, ...] | None = None
    """Tools that must be called in this order (other calls may come between, unless strict)."""
    strict_mode: bool = False
    """One tool: it must be the only call. An order: the calls must be exactly that sequence."""

    @model_validator(mode="after")
    def _checks_something(self) -> ToolCallAccuracy:
        if self.expected_tool is None and self.expected_tool_order is None:
            raise ValueError(
                "tool_call_accuracy needs expected_tool or expected_tool_order; "
                "with neither there is no check"
            )
        if self.expected_tool is not None and self.expected_tool_order is not None:
            raise ValueError(
                "give expected_tool or expected_tool_order, not both "
                "(Mastra ignores expected_tool when an order is given)"
            )
        if self.expected_tool_order is not None and not self.expected_tool_order:
            raise ValueError("expected_tool_order is empty; an empty order checks nothing")
        return self

    def _order_test(self) -> Callable[[list[str], Sequence[str]], bool]:
        """Whether the calls' names follow the order, under this scorer's rule."""
        if self.strict_mode:
            return _is_sequence
        if self.mastra:
            return _first_occurrences_in_order
        return _is_subsequence

    def named_tools(self) -> tuple[str, ...]:
        """`expected_tool` or `expected_tool_order`."""
        return (
            (self.expected_tool,) if self.expected_tool else tuple(self.expected_tool_order or ())
        )

    def readings(self) -> frozenset[Reading]:
        """None: tool names and statuses, and (Mastra) the run's input and output."""
        return frozenset()

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """1 when the expected tool (or order) is found among the counted calls, else 0."""
        return outcome_of(self.assessor()(trajectory))

    def bound_score(self) -> Callable[[Trajectory], Score]:
        """`score` with the config read once (see `assessor`)."""
        return self.bound_assessed(self.assessor())

    def assessor(self) -> Callable[[Trajectory], Assessed]:
        """`evaluate`'s Outcome as a tuple, from a function with the config read once."""
        mastra, strict, note_of = self.mastra, self.strict_mode, uncounted_note_of(self)
        counted = self.counter()
        order, tool, order_ok_of = self.expected_tool_order, self.expected_tool, self._order_test()
        mode = (
            "the exact sequence"
            if strict
            else ("first calls in order" if mastra else "in order, others between")
        )
        wanted = None if order is None else " -> ".join(order)

        def assess(trajectory: Trajectory) -> Assessed:
            if mastra and (
                not trajectory.input or not (trajectory.output or trajectory.tool_calls())
            ):
                missing = "input" if not trajectory.input else "final text or tool call"
                raise ScorerError(
                    "input and output messages cannot be null or empty (compat mastra: Mastra "
                    f"1.10.2 throws for a run without a user message or an assistant message; "
                    f"this run has no {missing})"
                )
            calls = counted(trajectory)
            actual = list(call_names(calls))
            correct_tool = tool is not None and (actual == [tool] if strict else tool in actual)
            order_ok = None if order is None else order_ok_of(actual, order)
            seen = ", ".join(actual) or "none"
            if order is not None:
                verdict = "followed" if order_ok else "not followed"
                explanation = f"expected order {wanted} ({mode}) {verdict}; calls: {seen}"
                value = 1.0 if order_ok and actual else 0.0
            elif strict:
                if correct_tool:
                    explanation = f"'{tool}' was the only call"
                else:
                    explanation = (
                        f"strict mode: expected exactly one call, to '{tool}'; calls: {seen}"
                    )
                value = 1.0 if correct_tool else 0.0
            else:
                verdict = "was called" if correct_tool else "was not called"
                explanation = f"expected tool '{tool}' {verdict}; calls: {seen}"
                value = 1.0 if correct_tool else 0.0
            note = note_of(trajectory, calls)
            if note:
                explanation += f"; {note}"
            details = Deferred(_details, tool, order, strict, actual, correct_tool, order_ok)
            return value, explanation, None, details

        return assess


def _details(
    tool: str | None,
    order: tuple[str, ...] | None,
    strict: bool,
    actual: list[str],
    correct_tool: bool,
    order_ok: bool | None,
) -> dict[str, Any]:
    """A score's details, built when read (`Score.details`)."""
    return {
        "expected_tool": tool,
        "expected_tool_order": None if order is None else list(order),
        "strict_mode": strict,
        "actual_tools": actual,
        "has_tool_calls": bool(actual),
        "correct_tool_called": correct_tool,
        "correct_order_called": order_ok,
    }
