"""Score attributes on the scored span: exact names and exact value types."""

from __future__ import annotations

import pytest
from hypothesis import given
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from export.attribute_values import attribute_values
from export.scored_runs import scored_run
from tracescore.export.attributes import error_type, key_values, score_attributes, to_any_value
from tracescore.model import Score
from tracescore.otlp.proto import decode_any_value


def test_every_kind_of_score_becomes_exactly_these_attributes() -> None:
    attrs = score_attributes(scored_run())
    assert attrs == {
        "eval.tool_calls.score": 0.5,
        "eval.tool_calls.label": "fail",
        "eval.tool_calls.explanation": "1 of 2 expected tools",
        "eval.budget.score": 1.0,
        "eval.budget.label": "pass",
        "eval.budget.explanation": "3 steps within 10",
        "eval.tone.score": 0.8,
        "eval.tone.label": "friendly",
        "eval.tone.explanation": "polite",
        # a failed scorer: no score at all (never a silent 0), label `error`
        "eval.judge.label": "error",
        "eval.judge.explanation": "scorer failed: TimeoutError: no answer",
        # a run the scorer could not score: no score, label `skipped`
        "eval.args.label": "skipped",
        "eval.args.explanation": "no call to check",
        "tracescore.scenario": "refunds",
        "tracescore.verdict": "scored",
        "tracescore.digest": "scenario-v1:ff",
        "tracescore.complete": True,
    }
    assert type(attrs["eval.budget.score"]) is float, "an int score value is sent as a double"
    assert type(attrs["tracescore.complete"]) is bool


def test_attribute_types_survive_the_wire() -> None:
    kvs = {kv.key: kv.value for kv in key_values(score_attributes(scored_run()))}
    assert kvs["eval.budget.score"].WhichOneof("value") == "double_value"
    assert kvs["eval.budget.label"].WhichOneof("value") == "string_value"
    assert kvs["tracescore.complete"].WhichOneof("value") == "bool_value"


def test_prefix_is_configurable() -> None:
    attrs = score_attributes(scored_run(), prefix="acme.quality")
    assert "acme.quality.tool_calls.score" in attrs
    assert not any(k.startswith("eval.") for k in attrs)
    with pytest.raises(ValueError, match="prefix"):
        score_attributes(scored_run(), prefix="")


def test_run_level_attributes_are_left_out_when_unknown() -> None:
    attrs = score_attributes(scored_run(verdict=None, digest=None, scores=()))
    assert attrs == {"tracescore.scenario": "refunds", "tracescore.complete": True}


def test_a_run_that_was_not_scored_gets_no_attributes() -> None:
    assert score_attributes(scored_run(scenario=None, scores=())) == {}
    assert score_attributes(scored_run(sampled=False, scores=())) == {}


def test_a_value_without_label_or_pass_rule_has_no_label() -> None:
    score = Score("raw", "x", 0.3, None, "just a number", "d")
    attrs = score_attributes(scored_run(scores=(score,)))
    assert "eval.raw.label" not in attrs
    assert attrs["eval.raw.score"] == 0.3


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("TimeoutError: no answer", "TimeoutError"),
        ("openai.APIError: 500", "openai.APIError"),
        ("judge budget exhausted", "_OTHER"),
    ],
)
def test_error_type_is_the_exception_class_or_other(error: str, expected: str) -> None:
    score = Score("j", "llm_judge", None, None, "failed", "d", error=error)
    assert error_type(score) == expected


@pytest.mark.parametrize(
    "value",
    ["text", True, False, 0, -7, 2**62, 0.25, b"\x00\x01", ("a", 1, 2.5, True), {"k": ("v",)}],
)
def test_any_value_round_trips_with_its_type(value: object) -> None:
    decoded = decode_any_value(to_any_value(value))  # type: ignore[arg-type]
    assert decoded == value
    assert type(decoded) is type(value)


def test_unencodable_value_is_refused_with_its_type() -> None:
    with pytest.raises(TypeError, match="set"):
        to_any_value({1, 2})  # type: ignore[arg-type]


@given(attribute_values())
def test_any_value_encoding_round_trips_through_the_wire(value: object) -> None:
    wire = to_any_value(value).SerializeToString()  # type: ignore[arg-type]
    decoded = decode_any_value(AnyValue.FromString(wire))
    assert decoded == value
    assert type(decoded) is type(value)


def test_empty_containers_and_none_keep_their_kind() -> None:
    assert to_any_value(()).WhichOneof("value") == "array_value"
    assert to_any_value({}).WhichOneof("value") == "kvlist_value"
    kvs = key_values({"k": None})
    assert kvs[0].HasField("value")
    assert kvs[0].value.WhichOneof("value") is None
