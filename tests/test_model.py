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


@pytest.mark.parametrize("value", [0.5, 1.0, 0, 1])
def test_error_score_with_any_value_is_refused(value: float) -> None:
    # Floats in range take the fast check in __post_init__, ints the full one: both refuse.
    with pytest.raises(ValueError, match="no value"):
        Score(name="x", type="x", value=value, passed=None, explanation="", digest="d", error="e")


@pytest.mark.parametrize("value", [0, 1, -0.0, 5e-324, math.nextafter(1.0, 0.0)])
def test_score_edge_values_inside_unit_interval_are_kept(value: float) -> None:
    score = Score(name="x", type="x", value=value, passed=None, explanation="", digest="d")
    assert score.value == value


@pytest.mark.parametrize("value", [-math.inf, -5e-324, math.nextafter(1.0, 2.0), 2, -1, False])
def test_score_edge_values_outside_unit_interval_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="must be in"):
        Score(name="x", type="x", value=value, passed=None, explanation="", digest="d")
