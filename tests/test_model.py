"""The pure data models refuse values that would mislead a dashboard."""

import math

import pytest

from tracescore.model import Score


@pytest.mark.parametrize("value", [1.4, -0.1, math.nan, math.inf, True])
def test_score_value_outside_unit_interval_is_refused(value: float) -> None:
    with pytest.raises(ValueError, match="must be in"):
        Score(name="x", type="x", value=value, passed=None, explanation="", digest="d")


@pytest.mark.parametrize("value", [0.0, 1.0, 0.5, None])
def test_score_value_inside_unit_interval_is_kept(value: float | None) -> None:
    score = Score(name="x", type="x", value=value, passed=None, explanation="", digest="d")
    assert score.value == value


def test_error_score_carries_no_value() -> None:
    with pytest.raises(ValueError, match="no value"):
        Score(name="x", type="x", value=0.0, passed=False, explanation="", digest="d", error="boom")
