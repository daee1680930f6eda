"""A run's log records and score attributes, written from memoized pieces, are the bytes of the
generic encodings (protobuf's for the records, `wire.attribute_fields` for the attributes) for
any scores, memos warm or cold."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from export.scored_runs import scored_run
from tracescore.export import encoded_attributes, events, log_records, scored_output, wire
from tracescore.export.attributes import score_attributes
from tracescore.model import Score
from tracescore.model.run_result import RunResult

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
def test_log_records_are_the_bytes_protobuf_writes(result: RunResult) -> None:
    body = events.encode_evaluation_logs([result], now_ns=7)
    request = ExportLogsServiceRequest.FromString(body)
    assert request.SerializeToString() == body
    records = [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert len(records) == len(result.scores)
    for record, score in zip(records, result.scores, strict=True):
        attributes = {kv.key: kv.value for kv in record.attributes}
        assert attributes["gen_ai.evaluation.explanation"].string_value == score.explanation
        if score.value is None:
            assert "gen_ai.evaluation.score.value" not in attributes
        else:
            assert attributes["gen_ai.evaluation.score.value"].double_value == float(score.value)


@settings(max_examples=300, deadline=None)
@given(RESULTS, st.sampled_from(["eval", "tracescore.eval", "é"]))
def test_score_attributes_are_the_generic_encoding(result: RunResult, prefix: str) -> None:
    want = score_attributes(result, prefix)
    got = encoded_attributes.encoded_score_attributes(result, prefix)
    assert list(got.items()) == list(want.items())  # the same keys, values and order
    assert list(map(type, got.values())) == list(map(type, want.values()))
    assert got.span_fields == wire.attribute_fields(encoded_attributes.SPAN_ATTRIBUTES, want)


def test_memos_emptied_between_runs_are_refilled_alike() -> None:
    run = scored_run()
    first = events.encode_evaluation_logs([run], now_ns=1)
    attributes = encoded_attributes.encoded_score_attributes(run)
    logs = events.EvaluationLogs(now_ns=1)
    logged = scored_output.logged_score_attributes(logs, run)
    log_records._TEMPLATES.clear()
    encoded_attributes._PIECES.clear()
    encoded_attributes._RUNS.clear()
    scored_output._PIECES.clear()
    assert events.encode_evaluation_logs([run], now_ns=1) == first
    assert encoded_attributes.encoded_score_attributes(run).span_fields == attributes.span_fields
    again = events.EvaluationLogs(now_ns=1)
    assert scored_output.logged_score_attributes(again, run).span_fields == logged.span_fields
    assert again.encode() == logs.encode() == first
    assert log_records._TEMPLATES  # the misses were remembered
    assert scored_output._PIECES


def test_two_scores_of_one_name_encode_what_the_mapping_holds() -> None:
    run = scored_run()
    twice = dataclasses.replace(run, scores=(run.scores[0], run.scores[0]))
    got = encoded_attributes.encoded_score_attributes(twice)
    want = score_attributes(twice)
    assert dict(got) == dict(want)
    assert got.span_fields == wire.attribute_fields(encoded_attributes.SPAN_ATTRIBUTES, want)


def test_a_malformed_score_is_a_type_error() -> None:
    run = scored_run()
    bad = dataclasses.replace(run.scores[0], explanation=b"not text")  # type: ignore[arg-type]
    with pytest.raises((TypeError, AttributeError)):
        events.encode_records((bad,), "a", "s", b"", b"")
    with pytest.raises((TypeError, AttributeError)):
        encoded_attributes.encoded_score_attributes(dataclasses.replace(run, scores=(bad,)))


@settings(max_examples=300, deadline=None)
@given(st.lists(RESULTS, min_size=1, max_size=3), st.sampled_from(["eval", "tracescore.eval", "é"]))
def test_records_and_attributes_in_one_pass_are_those_written_apart(
    results: list[RunResult], prefix: str
) -> None:
    apart = events.EvaluationLogs(now_ns=7)
    together = events.EvaluationLogs(now_ns=7)
    for result in results:
        apart.add(result)
        want = encoded_attributes.encoded_score_attributes(result, prefix)
        got = scored_output.logged_score_attributes(together, result, prefix)
        assert list(got.items()) == list(want.items())
        assert list(map(type, got.values())) == list(map(type, want.values()))
        assert got.span_fields == want.span_fields
    assert together.records == apart.records
    assert together.encode() == apart.encode()


def test_a_run_failing_in_one_pass_leaves_no_record() -> None:
    run = scored_run()
    bad = dataclasses.replace(run.scores[-1], explanation=b"not text")  # type: ignore[arg-type]
    logs = events.EvaluationLogs(now_ns=7)
    with pytest.raises((TypeError, AttributeError)):
        scored_output.logged_score_attributes(
            logs, dataclasses.replace(run, scores=(*run.scores, bad))
        )
    assert logs.records == 0
    request = ExportLogsServiceRequest.FromString(logs.encode())
    assert not [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    with pytest.raises(ValueError, match="prefix"):
        scored_output.logged_score_attributes(logs, run, "")
