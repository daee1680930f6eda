"""The result of one scorer on one agent run."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

from tracescore.model._record import record
from tracescore.model.deferred import Deferred, computed_on_read

__all__ = ["Score"]


_exact_type = type  # `type` is a field, and so a parameter of `__init__`
_NO_DETAILS: Mapping[str, Any] = MappingProxyType({})
"""The default of `details`, a fresh dict per score (`field(default_factory=dict)`)."""


def _check_value(value: float, error: str | None) -> None:
    """Refuse a value outside [0, 1] and an error score with a value. bool before float: bool
    subclasses int, and True is not a score."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        raise ValueError(f"score value must be in [0, 1], got {value!r}")
    if error is not None:
        raise ValueError("an error score carries no value")


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

    def __init__(
        self,
        name: str,
        type: str,
        value: float | None,
        passed: bool | None,
        explanation: str,
        digest: str,
        label: str | None = None,
        details: Mapping[str, Any] | Deferred = _NO_DETAILS,
        error: str | None = None,
    ) -> None:
        """The generated `__init__` and `__post_init__` in one call: every run builds a Score
        per scorer, and the generated pair was two Python calls and a default-factory test.
        Same fields, defaults and checks (tests/test_model.py compares with the generated
        one); `details=None` is stored as given, as the generated one stores it.

        `details` may be a `Deferred` that builds them, called when they are first read:
        `serve` reads no score's details, and building them was up to a tenth of scoring."""
        # Frozen to the type checker (`record`): its fields are set here, once.
        made: Any = self
        made.name = name
        made.type = type
        made.value = value
        made.passed = passed
        made.explanation = explanation
        made.digest = digest
        made.label = label
        made._stored_details = {} if details is _NO_DETAILS else details
        made.error = error
        # A float in range without an error (what `ScorerBase.finish` builds) is the one
        # shape that needs no check; NaN and infinities fail the comparison.
        if value is not None and (
            error is not None or not (_exact_type(value) is float and 0.0 <= value <= 1.0)
        ):
            _check_value(value, error)

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


computed_on_read(Score, "details", stored_as="_stored_details")
