"""The pure data models refuse values that would mislead a dashboard."""

import dataclasses
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
    # Floats in range take the fast check in __init__, ints the full one: both refuse.
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


def _generated_twin() -> type:
    """A class with Score's fields built as `record` builds one, but with the `__init__`
    dataclasses generates (Score writes its own)."""
    spec = [
        (f.name, f.type, dataclasses.field(default=f.default, default_factory=f.default_factory))
        for f in dataclasses.fields(Score)
    ]
    return dataclasses.make_dataclass("Twin", spec, slots=True, unsafe_hash=True)


def _fields(made: object) -> tuple[object, ...]:
    return tuple(getattr(made, f.name) for f in dataclasses.fields(Score))


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("n", "t", 0.5, True, "e", "d"), {}),
        (("n", "t", 1.0, True, "e", "d", "pass", {"k": 1}), {}),
        (
            (),
            {
                "name": "n",
                "type": "t",
                "value": None,
                "passed": None,
                "explanation": "e",
                "digest": "d",
                "error": "boom",
            },
        ),
        (("n", "t", 0, False, "e", "d"), {"label": "fail"}),
        (("n", "t", None, None, "e", "d"), {"details": None}),
        (("n", "t", None, None, "e", "d"), {"details": {}}),
    ],
)
def test_score_init_builds_what_the_generated_init_builds(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    score, twin = Score(*args, **kwargs), _generated_twin()(*args, **kwargs)
    assert _fields(score) == _fields(twin)
    assert type(score.details) is type(twin.details)
    assert score == Score(*args, **kwargs)
    assert dataclasses.replace(score) == score
    try:
        twin_hash = hash(twin)
    except TypeError:  # a dict of details is unhashable, in both
        with pytest.raises(TypeError):
            hash(score)
    else:
        assert hash(score) == twin_hash


def test_score_details_default_to_a_fresh_dict_and_none_is_kept() -> None:
    first = Score("n", "t", None, None, "e", "d")
    second = Score("n", "t", None, None, "e", "d")
    assert first.details == {}
    assert type(first.details) is dict
    assert first.details is not second.details
    # As the generated `__init__` did: an explicit None is stored, not replaced by a dict.
    assert Score("n", "t", None, None, "e", "d", details=None).details is None
    assert hash(Score("n", "t", 0.5, True, "e", "d", details=None)) == hash(
        _generated_twin()("n", "t", 0.5, True, "e", "d", details=None)
    )
