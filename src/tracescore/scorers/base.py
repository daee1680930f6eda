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
from typing import Any, ClassVar, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_validator

from tracescore import semconv
from tracescore.model import record
from tracescore.model.deferred import Deferred
from tracescore.model.score import Score
from tracescore.model.trajectory import READINGS, Reading, Trajectory
from tracescore.scorers._calls import CallPolicy, select_calls

__all__ = [
    "DIGEST_VERSION",
    "Assessed",
    "CallPolicy",
    "Details",
    "Outcome",
    "ScorerBase",
    "Threshold",
    "built",
    "outcome_of",
    "select_calls",
]

DIGEST_VERSION = "scorer-v1"

# A score's details on their way to it: built, or a `Deferred` that builds them when they are
# first read from the Score (`serve` reads none: building them was up to a tenth of scoring).
Details: TypeAlias = dict[str, Any] | Deferred
# An Outcome's (value, explanation, passed, details), as a scorer's `assessor` returns it.
Assessed: TypeAlias = tuple[float | None, str, bool | None, Details]


def built(details: Details) -> dict[str, Any]:
    """`details` built, as reading them from a Score gives them."""
    if isinstance(details, Deferred):
        made: dict[str, Any] = details()
        return made
    return details


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
        return self.checker()(value)

    def checker(self) -> Callable[[float], bool]:
        """`check` with the bounds read once (a field is read through pydantic's
        `__getattr__` hook, and scenario plans check every run's scores)."""
        low, high, isfinite = self.min, self.max, math.isfinite

        def check(value: float) -> bool:
            if not isfinite(value):
                return False
            if low is not None and value < low:
                return False
            return not (high is not None and value > high)

        return check


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


def outcome_of(assessed: Assessed) -> Outcome:
    """The Outcome of what an `assessor` returned (its details built)."""
    value, explanation, passed, details = assessed
    return Outcome(value, explanation, passed, built(details))


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
        Here `finish`'s constants are read once (`bound_finish`), unless a subclass has its
        own `score` or `finish`.
        """
        kind = type(self)
        if kind.score is not ScorerBase.score or kind.finish is not ScorerBase.finish:
            return self.score
        evaluate, finish = self.evaluate, self.bound_finish()
        error_score, digest = self.error_score, self.digest()

        def score(trajectory: Trajectory) -> Score:
            try:
                o = evaluate(trajectory)
            except Exception as exc:  # a scorer bug must not take the pipeline down
                return error_score(f"{type(exc).__name__}: {exc}", digest)
            return finish(o.value, o.explanation, o.passed, dict(o.details), digest, o.label)

        return score

    def bound_assessed(
        self, assess: Callable[[Trajectory], Assessed]
    ) -> Callable[[Trajectory], Score]:
        """A bound `score` from `assess`, which returns what `evaluate`'s Outcome would hold
        (no label), its details made for this score alone (or deferred): they are kept, not
        copied."""
        finish, error_score, digest = self.bound_finish(), self.error_score, self.digest()

        def score(trajectory: Trajectory) -> Score:
            try:
                value, explanation, passed, details = assess(trajectory)
            except Exception as exc:  # a scorer bug must not take the pipeline down
                return error_score(f"{type(exc).__name__}: {exc}", digest)
            return finish(value, explanation, passed, details, digest)

        return score

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

    def binary_constants(self) -> tuple[str, str, bool, bool, str, str]:
        """What every 0/1 score of this scorer shares: (name, type, `passed` of a 1, `passed` of
        a 0, label of a 1, label of a 0), what `finish` makes of an Outcome of value 1 or 0.

        The scorer is frozen, so a check's bound form reads them once, threshold's verdict on
        the only two values it scores included: per run, reading them from the pydantic model
        and checking the threshold cost about a third of building the Score."""
        threshold = self.threshold
        passes = True if threshold is None else threshold.check(1.0)
        fails = False if threshold is None else threshold.check(0.0)
        pass_label = semconv.LABEL_PASS if passes else semconv.LABEL_FAIL
        fail_label = semconv.LABEL_PASS if fails else semconv.LABEL_FAIL
        return self.name or self.type, self.type, passes, fails, pass_label, fail_label

    def finish(self, outcome: Outcome, digest: str) -> Score:
        """Apply the threshold and label rules to an outcome."""
        return self.bound_finish()(
            outcome.value,
            outcome.explanation,
            outcome.passed,
            dict(outcome.details),
            digest,
            outcome.label,
        )

    def bound_finish(self) -> Callable[..., Score]:
        """`finish` as a function of an Outcome's fields (`value, explanation, passed, details,
        digest, label=None`), with the scorer's name, type and threshold read once: this runs
        for every score of every run."""
        name, kind, threshold = self.name or self.type, self.type, self.threshold
        check = None if threshold is None else threshold.checker()
        pass_label, fail_label = semconv.LABEL_PASS, semconv.LABEL_FAIL

        def finish(
            value: float | None,
            explanation: str,
            passed: bool | None,
            details: Details,
            digest: str,
            label: str | None = None,
        ) -> Score:
            if value is None:
                passed = None
            else:
                value = float(value)
                if not 0.0 <= value <= 1.0:  # also NaN, which becomes 0.0
                    value = min(1.0, max(0.0, value))
                if check is not None:
                    passed = check(value)
                elif passed is None:
                    passed = value == 1.0
            if label is None and passed is not None:
                label = pass_label if passed else fail_label
            # Positional, in field order (name, type, value, passed, explanation, digest,
            # label, details): keyword arguments cost about as much as the rest of building
            # the Score.
            return Score(name, kind, value, passed, explanation, digest, label, details)

        return finish
