"""The scorer base: a frozen pydantic model whose config is the scorer.

A scorer is validated at construction (a scorer that can check nothing is refused), scores a
trajectory with a pure `score(trajectory) -> Score` and never raises: a failure becomes an error
score. `digest()` identifies the exact scoring rule.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, ClassVar, Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_validator

from tracescore import semconv
from tracescore.model import record
from tracescore.model.score import Score
from tracescore.model.trajectory import READINGS, AgentStep, Reading, ToolCall, Trajectory

__all__ = [
    "DIGEST_VERSION",
    "CallPolicy",
    "Outcome",
    "ScorerBase",
    "Threshold",
    "select_calls",
]

DIGEST_VERSION = "scorer-v1"

# Which tool calls a scorer counts. `clean`: only clean executions (status ok).
# `attempted`: every call the agent made, ok, errored or paused (Mastra's rule).
CallPolicy: TypeAlias = Literal["clean", "attempted"]


def select_calls(
    trajectory: Trajectory, policy: CallPolicy, include_subagents: bool = False
) -> tuple[ToolCall, ...]:
    """The trajectory's tool calls that count under `policy`, in trajectory order (the step
    objects themselves); with `include_subagents`, the sub-agents' calls too."""
    global _last_run  # a one-entry memo, see below
    memo = _last_run
    if memo is None or memo[0] is not trajectory:
        memo = _last_run = (trajectory, [None, None, None, None])
    slots = memo[1]
    slot = 2 * include_subagents + (policy == "clean")
    calls = slots[slot]
    if calls is None:
        # The slots another answer derives from are read here rather than asked again: a
        # call costs more than the rest of a memo hit.
        if policy == "clean":
            every = slots[slot - 1]
            if every is None:
                every = select_calls(trajectory, "attempted", include_subagents)
            calls = tuple([c for c in every if c.status == "ok"])
        elif include_subagents and AgentStep not in map(type, trajectory.steps):
            # No sub-agents: the same calls. (Steps are exactly ToolCall, ModelCall or
            # AgentStep, so the type test is isinstance's, looped in C.)
            calls = slots[0]
            if calls is None:
                calls = select_calls(trajectory, policy)
        elif include_subagents:
            calls = trajectory.tool_calls(include_subagents=True)
        else:  # `trajectory.tool_calls()`, without the call (and the type test as above)
            calls = tuple([s for s in trajectory.steps if type(s) is ToolCall])
        slots[slot] = calls
    return calls


# The calls of the last run asked about, in a slot per (include_subagents, policy): the
# scorers of a scenario, and then the run's metrics, ask about the same run one after another,
# and walking its steps was a third of a simple check's cost. Keyed by identity: runs are
# immutable records. Threads may race on it harmlessly (a lost entry is only computed again).
_last_run: tuple[Trajectory, list[tuple[ToolCall, ...] | None]] | None = None


class Threshold(BaseModel):
    """`{min: x}`, `{max: x}`, both, or a bare number meaning min; bounds in [0, 1]."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min: float | None = None
    max: float | None = None

    @model_validator(mode="before")
    @classmethod
    def bare_number_means_min(cls, data: Any) -> Any:
        # bool before float: bool subclasses int, and `true` is not a threshold.
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"min": data}
        return data

    @model_validator(mode="after")
    def bounds_are_scores(self) -> Threshold:
        if self.min is None and self.max is None:
            raise ValueError("a threshold needs min, max or both")
        for label, bound in (("min", self.min), ("max", self.max)):
            if bound is not None and (not math.isfinite(bound) or not 0.0 <= bound <= 1.0):
                raise ValueError(f"threshold {label} must be between 0 and 1, got {bound!r}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"threshold min {self.min} is greater than max {self.max}")
        return self

    def check(self, value: float) -> bool:
        """True when `value` lies within the bounds (inclusive)."""
        if not math.isfinite(value):
            return False
        if self.min is not None and value < self.min:
            return False
        return not (self.max is not None and value > self.max)


@record
class Outcome:
    """What a scorer's `evaluate` returns; `ScorerBase.score` turns it into a Score.

    `value` None means the run cannot be scored (and `explanation` says why). `passed` None means
    "passed when value is 1".
    """

    value: float | None
    explanation: str
    passed: bool | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None


class ScorerBase(BaseModel):
    """Base of every scorer; subclasses add `type: Literal[...]` and their parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    name: str | None = None
    """Name of the score (default: the type); unique within a scenario."""
    threshold: Threshold | None = None
    """Pass/fail bound on the value; overrides the scorer's own notion of passing."""

    deterministic: ClassVar[bool] = True

    # The digest, computed once: scorers are frozen, and scoring a run must not re-serialize
    # the config (a functools.cached_property cannot live on a frozen pydantic model).
    _digest: str = PrivateAttr(default="")

    def model_post_init(self, context: Any, /) -> None:
        """Compute the digest at construction, so an unhashable config fails early."""
        self._digest = self._compute_digest()

    @property
    def score_name(self) -> str:
        """The name scores carry: `name` if given, else the type."""
        return self.name or self.type

    def digest_payload(self) -> dict[str, Any]:
        """The config the digest covers; subclasses may canonicalize order-free parts."""
        return self.model_dump(mode="json", exclude={"name", "threshold"})

    def _compute_digest(self) -> str:
        canonical = json.dumps(
            self.digest_payload(), sort_keys=True, separators=(",", ":"), ensure_ascii=True
        )
        return f"{DIGEST_VERSION}:{hashlib.sha256(canonical.encode()).hexdigest()}"

    def digest(self) -> str:
        """`scorer-v1:<sha256>` of the canonical scoring config (name and threshold excluded)."""
        # Read the private dict directly: `self._digest` goes through pydantic's __getattr__,
        # which costs more than the rest of a simple check.
        private = self.__pydantic_private__
        digest: str = private.get("_digest", "") if private is not None else ""
        if not digest:  # a subclass's model_post_init may not have called ours
            digest = self._digest = self._compute_digest()
        return digest

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with `update`, a new scorer validated from scratch.

        Pydantic's own copy skips validation and would carry over the cached digest and any
        precomputed matching tables, so a changed copy is rebuilt through the constructor.
        """
        if not update:
            return super().model_copy(deep=deep)
        return type(self).model_validate({**self.model_dump(), **update})

    def readings(self) -> frozenset[Reading]:
        """The optional parts of a run (`Reading`) this scorer reads: all of them, unless a
        subclass knows it reads fewer. `serve` leaves a part no configured scorer reads
        undecoded, so a scorer must never read a part it does not name here
        (tests/scorers/test_readings.py scores runs with and without the others)."""
        return READINGS

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """Score one trajectory. Pure: no I/O, no clock. Subclasses implement this."""
        raise NotImplementedError

    def score(self, trajectory: Trajectory) -> Score:
        """Score one trajectory; a scorer that fails yields an error score, never raises."""
        digest = self.digest()
        try:
            outcome = self.evaluate(trajectory)
        except Exception as exc:  # a scorer bug must not take the pipeline down
            return self.error_score(f"{type(exc).__name__}: {exc}", digest)
        return self.finish(outcome, digest)

    def bound_score(self) -> Callable[[Trajectory], Score]:
        """`score`, for a caller that scores many runs with this scorer (a scenario's plan).

        A scorer may return a function with its config read once: a field of a pydantic
        model is read through its `__getattr__` hook, several times slower than a local.
        """
        return self.score

    def error_score(self, error: str, digest: str | None = None) -> Score:
        """The score of a run this scorer failed on."""
        return Score(
            name=self.score_name,
            type=self.type,
            value=None,
            passed=None,
            explanation=f"scorer failed: {error}",
            digest=digest or self.digest(),
            error=error,
        )

    def binary_score(
        self, passed: bool, explanation: str, details: dict[str, Any], digest: str
    ) -> Score:
        """`finish(Outcome(1.0 if passed else 0.0, explanation, None, details), digest)`.

        The 0/1 checks score every run through here: no Outcome is built, and `details`, which
        the caller built for this score alone, is kept rather than copied.
        """
        return self.bound_binary_score()(passed, explanation, details, digest)

    def bound_binary_score(self) -> Callable[[bool, str, dict[str, Any], str], Score]:
        """`binary_score`, for a caller that scores many runs with this scorer (`bound_score`).

        The scorer is frozen, so its name, type and threshold are read once, and so is the
        threshold's verdict on the only two values a check scores: per run, reading them from
        the pydantic model and checking the threshold cost about a third of building the Score.
        """
        name, kind, passes, fails, pass_label, fail_label = self.binary_constants()

        def binary_score(
            passed: bool, explanation: str, details: dict[str, Any], digest: str
        ) -> Score:
            # Positional, in field order (see `finish`).
            if passed:
                return Score(name, kind, 1.0, passes, explanation, digest, pass_label, details)
            return Score(name, kind, 0.0, fails, explanation, digest, fail_label, details)

        return binary_score

    def binary_constants(self) -> tuple[str, str, bool, bool, str, str]:
        """What every 0/1 score of this scorer shares: (name, type, `passed` of a 1, `passed` of
        a 0, label of a 1, label of a 0)."""
        threshold = self.threshold
        passes = True if threshold is None else threshold.check(1.0)
        fails = False if threshold is None else threshold.check(0.0)
        pass_label = semconv.LABEL_PASS if passes else semconv.LABEL_FAIL
        fail_label = semconv.LABEL_PASS if fails else semconv.LABEL_FAIL
        return self.name or self.type, self.type, passes, fails, pass_label, fail_label

    def finish(self, outcome: Outcome, digest: str) -> Score:
        """Apply the threshold and label rules to an outcome."""
        value = outcome.value
        if value is not None:
            value = float(value)
            if not 0.0 <= value <= 1.0:  # also NaN, which becomes 0.0
                value = min(1.0, max(0.0, value))
        if value is None:
            passed: bool | None = None
        elif self.threshold is not None:
            passed = self.threshold.check(value)
        elif outcome.passed is not None:
            passed = outcome.passed
        else:
            passed = value == 1.0
        label = outcome.label
        if label is None and passed is not None:
            label = semconv.LABEL_PASS if passed else semconv.LABEL_FAIL
        # Positional, in field order (name, type, value, passed, explanation, digest, label,
        # details): this runs for every score of every run, and keyword arguments cost about
        # as much as the rest of building the Score. `self.name or self.type` is `score_name`
        # without the property call.
        return Score(
            self.name or self.type,
            self.type,
            value,
            passed,
            outcome.explanation,
            digest,
            label,
            dict(outcome.details),
        )
