"""The result of one scorer on one agent run."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from tracescore.model._record import record

__all__ = ["Score"]


@record
class Score:
    """A score in [0, 1], or None when the run cannot be scored or the scorer failed.

    A scorer that fails yields `error` and no value, never a silent 0. `digest` identifies the
    exact scorer config that produced the score, so dashboards can tell config versions apart.
    """

    name: str
    type: str
    value: float | None
    passed: bool | None
    explanation: str
    digest: str
    label: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    def __post_init__(self) -> None:
        value = self.value
        if value is None:
            return
        # A float in range (what `ScorerBase.finish` builds) skips the full check; NaN and
        # infinities fail its comparison. bool before float: bool subclasses int, and True is
        # not a score.
        if not (type(value) is float and 0.0 <= value <= 1.0) and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0.0 <= value <= 1.0
        ):
            raise ValueError(f"score value must be in [0, 1], got {value!r}")
        if self.error is not None:
            raise ValueError("an error score carries no value")

    @property
    def scored(self) -> bool:
        """True when the scorer produced a value."""
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by `tracescore score --output json`."""
        return {
            "name": self.name,
            "type": self.type,
            "value": self.value,
            "passed": self.passed,
            "label": self.label,
            "explanation": self.explanation,
            "digest": self.digest,
            "error": self.error,
        }
