"""`gen_ai.evaluation.result` log events: one per score, pointing at the scored span."""

from __future__ import annotations

from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber

from export.scored_runs import AGENT_SPAN, TRACE, scored_run
from tracescore.export.events import evaluation_logs
from tracescore.otlp.proto import decode_any_value


def records_by_name(**overrides: object) -> dict[str, object]:
    request = evaluation_logs([scored_run(**overrides)], now_ns=42)
    (rl,) = request.resource_logs
    (sl,) = rl.scope_logs
    return {
        decode_any_value(
            next(kv.value for kv in r.attributes if kv.key == "gen_ai.evaluation.name")
        ): r  # type: ignore[misc]
        for r in sl.log_records
    }


def attrs(record: object) -> dict[str, object]:
    return {kv.key: decode_any_value(kv.value) for kv in record.attributes}  # type: ignore[attr-defined]


def test_one_event_per_score_on_the_scored_span() -> None:
    records = records_by_name()
    assert set(records) == {"tool_calls", "budget", "tone", "judge", "args"}
    for record in records.values():
        assert record.event_name == "gen_ai.evaluation.result"  # type: ignore[attr-defined]
        assert record.trace_id.hex() == TRACE  # type: ignore[attr-defined]
        assert record.span_id.hex() == AGENT_SPAN  # type: ignore[attr-defined]
        assert record.time_unix_nano == record.observed_time_unix_nano == 42  # type: ignore[attr-defined]


def test_a_scored_event_has_exactly_these_attributes_and_types() -> None:
    got = attrs(records_by_name()["budget"])
    assert got == {
        "event.name": "gen_ai.evaluation.result",
        "gen_ai.evaluation.name": "budget",
        "gen_ai.evaluation.score.value": 1.0,
        "gen_ai.evaluation.score.label": "pass",
        "gen_ai.evaluation.explanation": "3 steps within 10",
        "gen_ai.agent.name": "support-bot",
        "tracescore.scenario": "refunds",
        "tracescore.digest": "scorer-v1:bb",
    }
    assert type(got["gen_ai.evaluation.score.value"]) is float


def test_a_failed_scorer_sends_error_type_and_no_value() -> None:
    record = records_by_name()["judge"]
    got = attrs(record)
    assert got["error.type"] == "TimeoutError"
    assert got["gen_ai.evaluation.score.label"] == "error"
    assert "gen_ai.evaluation.score.value" not in got
    assert record.severity_number == SeverityNumber.SEVERITY_NUMBER_WARN  # type: ignore[attr-defined]
    ok = records_by_name()["tool_calls"]
    assert ok.severity_number == SeverityNumber.SEVERITY_NUMBER_INFO  # type: ignore[attr-defined]
    assert "error.type" not in attrs(ok)


def test_unscorable_run_is_labelled_skipped() -> None:
    got = attrs(records_by_name()["args"])
    assert got["gen_ai.evaluation.score.label"] == "skipped"
    assert "gen_ai.evaluation.score.value" not in got


def test_records_keep_the_agents_resource_unless_one_is_given() -> None:
    request = evaluation_logs([scored_run()], now_ns=1)
    res = {kv.key: kv.value.string_value for kv in request.resource_logs[0].resource.attributes}
    assert res == {"service.name": "support", "deployment.environment": "prod"}
    request = evaluation_logs([scored_run()], {"service.name": "tracescore"}, now_ns=1)
    res = {kv.key: kv.value.string_value for kv in request.resource_logs[0].resource.attributes}
    assert res == {"service.name": "tracescore"}


def test_runs_without_scores_add_nothing() -> None:
    assert len(evaluation_logs([scored_run(scores=())]).resource_logs) == 0


def test_a_run_without_agent_span_id_leaves_span_id_empty() -> None:
    run = scored_run()
    run = scored_run(trajectory=type(run.trajectory)(trace_id=TRACE, span_id=None))
    record = evaluation_logs([run]).resource_logs[0].scope_logs[0].log_records[0]
    assert record.trace_id.hex() == TRACE
    assert record.span_id == b""
