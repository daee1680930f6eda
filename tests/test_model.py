"""The pure data models refuse values that would mislead a dashboard."""

import inspect
import json
import math
import pickle
from dataclasses import MISSING, field, fields, make_dataclass, replace
from typing import Any

import pytest

from tracescore.model import Score
from tracescore.model.deferred import Deferred
from tracescore.model.steps import ToolCall


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


# `ToolCall.__init__` is written by hand (it stores the deferred fields in their slots): these
# pin it to what the generated one built, so a field added without it fails here.


def _generated_tool_call(*args: Any, **kwargs: Any) -> ToolCall:
    """A ToolCall built as the dataclass's generated `__init__` builds one: every field
    assigned in order, the deferred ones through their properties."""
    values = dict(zip((f.name for f in fields(ToolCall)), args, strict=False)) | kwargs
    call = object.__new__(ToolCall)
    for f in fields(ToolCall):
        object.__setattr__(call, f.name, values.get(f.name, f.default))
    return call


def test_tool_call_init_takes_every_field_in_order_with_its_default() -> None:
    parameters = list(inspect.signature(ToolCall.__init__).parameters.values())[1:]
    assert [(p.name, p.default) for p in parameters] == [
        (f.name, inspect.Parameter.empty if f.default is MISSING else f.default)
        for f in fields(ToolCall)
    ]


_FULL = (
    "lookup",
    "call_1",
    ("q", "x"),  # (hashable: a ToolCall hashes its fields)
    (1, 2),
    "error",
    "ValueError",
    "bad",
    "approval",
    10,
    20,
    "ab12",
    "triage",
)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("lookup",), {}),
        (_FULL, {}),
        ((), dict(zip((f.name for f in fields(ToolCall)), _FULL, strict=True))),
        (("lookup",), {"result": "text", "status": "paused", "agent": "a"}),
    ],
)
def test_tool_call_init_builds_what_the_generated_one_built(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    built = ToolCall(*args, **kwargs)
    expected = _generated_tool_call(*args, **kwargs)
    assert built == expected
    assert hash(built) == hash(expected)
    assert repr(built) == repr(expected)
    assert built.to_dict() == expected.to_dict()
    for f in fields(ToolCall):
        assert getattr(built, f.name) == getattr(expected, f.name), f.name
    assert replace(built, status="ok") == replace(expected, status="ok")
    assert pickle.loads(pickle.dumps(built)) == expected


def test_tool_call_deferred_fields_read_as_computed() -> None:
    built = ToolCall(
        "lookup", arguments=Deferred(json.loads, '"x"'), result=Deferred(json.loads, "12")
    )
    parsed = ToolCall("lookup", arguments="x", result=12)
    assert built == parsed
    assert hash(built) == hash(parsed)
    assert (built.arguments, built.result) == ("x", 12)
    assert built.to_dict() == parsed.to_dict()
    # Reading stored the computed values in place of the deferred ones.
    assert (built._stored_arguments, built._stored_result) == ("x", 12)  # type: ignore[attr-defined]


def _generated_twin() -> type:
    """A class with Score's fields built as `record` builds one, but with the `__init__`
    dataclasses generates (Score writes its own)."""
    spec = [
        (f.name, f.type, field(default=f.default, default_factory=f.default_factory))
        for f in fields(Score)
    ]
    return make_dataclass("Twin", spec, slots=True, unsafe_hash=True)


def _fields(made: object) -> tuple[object, ...]:
    return tuple(getattr(made, f.name) for f in fields(Score))


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
    assert replace(score) == score
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
