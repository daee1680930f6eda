"""The native encoders of a run's log records and score attributes (otlp/_emit_*.c) write exactly
what their Python twins write, for any scores."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from export.scored_runs import scored_run
from tracescore import semconv
from tracescore.export import encoded_attributes, events
from tracescore.model import Score
from tracescore.scenarios import RunResult

native = pytest.importorskip("tracescore.otlp._scan", reason="the C extension was not built")

TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["", "x" * 93, "é" * 47, "€" * 5000, "😀" * 33]
)
NAMES = st.sampled_from(["tool_calls", "budget", "no_tool_errors", "é-check", "x" * 130])


@st.composite
def scores(draw: st.DrawFn) -> Score:
    name = draw(NAMES)
    if draw(st.booleans()) and draw(st.booleans()):  # a failed scorer: no value, no label
        error = draw(TEXT)
        return Score(name, "check", None, None, f"scorer failed: {error}", "d:1", error=error)
    value = draw(st.none() | st.sampled_from([0, 1]) | st.floats(0.0, 1.0))
    passed = None if value is None else draw(st.booleans())
    label = draw(st.none() | st.sampled_from(["pass", "fail", "friendly", "é"]))
    return Score(name, "check", value, passed, draw(TEXT), draw(st.sampled_from(["d:1", "d:2"])),
                 label=label)  # fmt: skip


RESULTS = st.builds(
    lambda s, agent, scenario, verdict, complete: dataclasses.replace(
        scored_run(scores=tuple(s), scenario=scenario, verdict=verdict),
        trajectory=dataclasses.replace(scored_run().trajectory, agent=agent, complete=complete),
    ),
    st.lists(scores(), max_size=6),
    st.none() | st.sampled_from(["", "support-bot", "ágent"]),
    st.sampled_from(["refunds", "é"]),
    st.sampled_from([None, "passed", "failed", "scored"]),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(RESULTS)
def test_log_records_are_the_python_twins_bytes(result: RunResult) -> None:
    agent, scenario = result.trajectory.agent, result.scenario
    start, end = b"\x09" + bytes(8), b"\x4a\x10" + bytes(16)
    want = events.python_encode_records(result.scores, agent, scenario, start, end)
    assert events._encode_records(result.scores, agent, scenario, start, end) == want


@settings(max_examples=300, deadline=None)
@given(RESULTS, st.sampled_from(["eval", "tracescore.eval", "é"]))
def test_score_attributes_are_the_python_twins(result: RunResult, prefix: str) -> None:
    want = encoded_attributes.python_encoded_score_attributes(result, prefix)
    got = encoded_attributes.encoded_score_attributes(result, prefix)
    assert list(got.items()) == list(want.items())  # the same keys, values and order
    assert {type(v) for v in got.values()} == {type(v) for v in want.values()}
    assert got.span_fields == want.span_fields


def test_records_of_every_explanation_length_match_across_varint_boundaries() -> None:
    run = scored_run()
    for n in [*range(0, 300), *range(16300, 16450), 2_097_151, 2_097_152]:
        scores = tuple(dataclasses.replace(s, explanation="é" * (n // 2) + "x" * (n % 2))
                       for s in run.scores)  # fmt: skip
        want = events.python_encode_records(scores, "a", "s", b"", b"")
        assert events._encode_records(scores, "a", "s", b"", b"") == want, n
        result = dataclasses.replace(run, scores=scores)
        python = encoded_attributes.python_encoded_score_attributes(result)
        assert encoded_attributes.encoded_score_attributes(result).span_fields == (
            python.span_fields
        ), n


def test_memos_emptied_between_runs_are_refilled_through_the_python_makers() -> None:
    run = scored_run()
    first = events.encode_evaluation_logs([run], now_ns=1)
    attributes = encoded_attributes.encoded_score_attributes(run)
    events._TEMPLATES.clear()
    encoded_attributes._BY_PREFIX.clear()
    encoded_attributes._PIECES.clear()
    assert events.encode_evaluation_logs([run], now_ns=1) == first
    assert encoded_attributes.encoded_score_attributes(run).span_fields == attributes.span_fields
    assert events._TEMPLATES  # the native encoder's misses were remembered by the makers
    assert encoded_attributes._BY_PREFIX[semconv.DEFAULT_SCORE_ATTRIBUTE_PREFIX][0]


def test_two_scores_of_one_name_fall_back_to_what_the_mapping_holds() -> None:
    run = scored_run()
    twice = dataclasses.replace(run, scores=(run.scores[0], run.scores[0]))
    got = encoded_attributes.encoded_score_attributes(twice)
    want = encoded_attributes.python_encoded_score_attributes(twice)
    assert got.span_fields == want.span_fields
    assert dict(got) == dict(want)


def test_a_malformed_score_is_a_type_error_not_a_crash() -> None:
    run = scored_run()
    bad = dataclasses.replace(run.scores[0], explanation=b"not text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="explanation must be a str"):
        events._encode_records((bad,), "a", "s", b"", b"")
    with pytest.raises(TypeError, match="explanation must be a str"):
        encoded_attributes.encoded_score_attributes(dataclasses.replace(run, scores=(bad,)))
    with pytest.raises(TypeError, match="takes 6 arguments"):
        native.encode_log_records()


def test_a_run_with_distinct_score_names_takes_the_native_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = scored_run()
    want = encoded_attributes.python_encoded_score_attributes(run)

    def fallback(*args: object) -> None:
        raise AssertionError("fell back to the Python twin")

    monkeypatch.setattr(encoded_attributes, "python_encoded_score_attributes", fallback)
    assert encoded_attributes.encoded_score_attributes(run).span_fields == want.span_fields
