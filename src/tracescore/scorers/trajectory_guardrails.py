"""`trajectory_guardrails`: Mastra's unified trajectory scorer (`createTrajectoryScorerCode`).

Four dimensions, each active only when configured, combined as a weighted mean (default
weights accuracy 0.4, efficiency 0.3, tool failures 0.2, blacklist 0.1, renormalised over the
active ones):

- accuracy: `steps` compared as `trajectory_accuracy` does (active when `steps` is given;
  `steps: []` means "expect no tool call");
- efficiency: `max_steps`, `max_total_tokens`, `max_duration_ms` budgets and, whenever any of
  them is set or `no_redundant_calls` is given, 0.2 off per call that repeats the previous one
  with the same arguments (Mastra turns redundancy on with any budget; `false` turns it off);
- tool failures: retries of a tool after it failed beyond `max_retries_per_tool` (active only
  when some tool was retried after a failure);
- blacklist: a call to a blacklisted tool or a blacklisted sequence of consecutive calls makes
  the whole score 0, whatever the other dimensions say.

Which calls: the accuracy dimension counts per `calls` (clean executions by default, every
attempt under `compat: mastra`); efficiency, tool failures and the blacklist see every call,
errored and paused ones included. Tokens come from the model calls at any depth (sub-agents
spend the same budget); the duration is the agent span's. A budget whose measurement is
missing is not scorable: said so in the explanation and `details["not_scorable"]`, left out
of the mean; when nothing scorable remains the value is None. Under `compat: mastra` a missing
measurement is an error score, as Mastra 1.10.2 throws, and values are rounded as Mastra
rounds (`Math.round(x * 100) / 100`). Nothing configured at all scores 1 (Mastra's rule: only
retries are watched then).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from tracescore.model.trajectory import Trajectory
from tracescore.scorers._common import ExpectationScorer, ToolName, with_handoffs
from tracescore.scorers._compare import ArgsMatch, Comparison, Expected, Ordering, compare_steps
from tracescore.scorers._guardrail_dimensions import (
    Blacklist,
    Efficiency,
    blacklist,
    efficiency,
    tool_failures,
)
from tracescore.scorers._matching import fmt_score, js_round2
from tracescore.scorers.base import Outcome
from tracescore.scorers.trajectory_accuracy import StepSpec, expectations, prepare

__all__ = ["GuardrailWeights", "TrajectoryGuardrails"]


class GuardrailWeights(BaseModel):
    """Relative weights of the dimensions (renormalised over the active ones)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    accuracy: float = Field(default=0.4, ge=0)
    efficiency: float = Field(default=0.3, ge=0)
    tool_failures: float = Field(default=0.2, ge=0)
    blacklist: float = Field(default=0.1, ge=0)


class TrajectoryGuardrails(ExpectationScorer):
    """Did the run stay on path, within budget, off forbidden tools and out of retry loops?"""

    type: Literal["trajectory_guardrails"] = "trajectory_guardrails"
    steps: tuple[StepSpec, ...] | None = None
    """Expected tool calls (accuracy dimension); `[]` expects none; omitted: no accuracy."""
    ordering: Ordering = "relaxed"
    allow_repeated_steps: bool = True
    args_match: ArgsMatch = "subset"
    max_steps: int | None = Field(default=None, ge=0)
    """At most this many tool calls (every call counts)."""
    no_redundant_calls: bool | None = None
    """Penalise back-to-back identical calls; on by default once any budget is set."""
    max_retries_per_tool: int = Field(default=2, ge=0)
    blacklisted_tools: tuple[ToolName, ...] = ()
    blacklisted_sequences: tuple[tuple[ToolName, ...], ...] = ()
    max_total_tokens: int | None = Field(default=None, ge=0)
    """At most this many input + output tokens over every model call of the run."""
    max_duration_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """At most this long, from the agent span."""
    weights: GuardrailWeights = Field(default_factory=GuardrailWeights)

    _expected: tuple[Expected, ...] = PrivateAttr(default=())

    @field_validator("blacklisted_sequences")
    @classmethod
    def _sequences_not_empty(
        cls, value: tuple[tuple[str, ...], ...]
    ) -> tuple[tuple[str, ...], ...]:
        # Mastra skips empty sequences silently; an empty one here is a config mistake.
        if any(not seq for seq in value):
            raise ValueError("a blacklisted sequence is empty; it would forbid nothing")
        return value

    def named_tools(self) -> tuple[str, ...]:
        """The expected steps' tools and the blacklisted ones."""
        return (
            tuple(s.tool for s in self.steps or ())
            + self.blacklisted_tools
            + tuple(n for seq in self.blacklisted_sequences for n in seq)
        )

    def model_post_init(self, context: Any, /) -> None:
        """Precompute the expectations once per scorer."""
        super().model_post_init(context)
        self._expected = prepare(self.steps)

    @property
    def _efficiency_on(self) -> bool:
        return (
            self.max_steps is not None
            or self.max_total_tokens is not None
            or self.max_duration_ms is not None
            or self.no_redundant_calls is not None
        )

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """Weighted mean of the active dimensions, 0 on any blacklist violation."""
        every = trajectory.tool_calls(include_subagents=self.include_subagents)
        mastra = self.mastra
        expected = expectations(self)
        acc: Comparison | None = None
        if self.steps is not None:
            acc = compare_steps(
                self.counted(trajectory),
                expected,
                ordering=self.ordering,
                allow_repeated=self.allow_repeated_steps,
                args_match=self.args_match,
                mastra=mastra,
            )
        eff: Efficiency | None = None
        if self._efficiency_on:
            eff = efficiency(
                trajectory,
                every,
                max_steps=self.max_steps,
                max_total_tokens=self.max_total_tokens,
                max_duration_ms=self.max_duration_ms,
                no_redundant_calls=self.no_redundant_calls is not False,
                mastra=mastra,
            )
        bl: Blacklist | None = None
        if self.blacklisted_tools or self.blacklisted_sequences:
            # A blacklisted `handoff:<agent>` sees the run's handoffs among its calls.
            seen = (
                with_handoffs(trajectory, every, self.include_subagents)
                if self.names_handoffs
                else every
            )
            bl = blacklist(seen, self.blacklisted_tools, self.blacklisted_sequences)
        tf = tool_failures(every, max_retries=self.max_retries_per_tool, mastra=mastra)

        details: dict[str, Any] = {
            "accuracy": None if acc is None else acc.details(),
            "efficiency": None if eff is None else eff.details(),
            "blacklist": None if bl is None else bl.details(),
            "tool_failures": tf.details(),
            "not_scorable": [] if eff is None else list(eff.not_scorable),
        }
        if bl is not None and bl.score == 0:
            details["dimensions"] = {"blacklist": 0.0}
            return Outcome(value=0.0, explanation=f"Score: 0\n{bl.line()}", details=details)

        w = self.weights
        active: dict[str, tuple[float, float]] = {}
        lines: list[str] = []
        if acc is not None:
            active["accuracy"] = (w.accuracy, acc.score)
            lines.append(acc.line(mastra=mastra, allow_repeated=self.allow_repeated_steps))
        if eff is not None:
            if eff.score is not None:
                active["efficiency"] = (w.efficiency, eff.score)
            lines.append(eff.line())
        if tf.patterns:
            active["tool_failures"] = (w.tool_failures, tf.score)
            lines.append(tf.line())
        if bl is not None:
            active["blacklist"] = (w.blacklist, bl.score)
        details["dimensions"] = {k: s for k, (_, s) in active.items()}

        value: float | None
        if active:
            total = sum(weight for weight, _ in active.values())
            value = 1.0 if total == 0 else sum(wt / total * s for wt, s in active.values())
            value = min(1.0, max(0.0, value))
            if mastra:
                value = js_round2(value)
        elif eff is not None and eff.score is None:
            value = None  # budgets were asked for and none could be measured
        else:
            value = 1.0  # nothing configured: only retries were watched, and none happened
        head = "Score: not scorable" if value is None else f"Score: {fmt_score(value)}"
        return Outcome(value=value, explanation="\n".join([head, *lines]), details=details)
