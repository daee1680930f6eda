"""The OTLP metrics push: the SDK's exporter (gRPC and HTTP) to a real OTLP receiver, with
cumulative temporality, exact names and types, zeroed counters, and failures counted."""

from __future__ import annotations

import logging
from typing import Any

import grpc
import pytest
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from support.agent_spans import agent_run, request
from support.otlp_sink import OtlpSink, attrs, free_port
from support.serve_thread import ServeThread
from tracescore import semconv
from tracescore.config import parse_config
from tracescore.export.catalog import SCORE_BOUNDS
from tracescore.export.metrics import Telemetry
from tracescore.export.otlp_metrics import CountingExporter, metric_exporter
from tracescore.model import Score, ToolCall, Trajectory
from tracescore.model.run_result import RunResult

CUMULATIVE = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE


def scored_run() -> RunResult:
    trajectory = Trajectory(
        trace_id="ab" * 16, span_id=None, agent="shop", steps=(ToolCall("get_weather"),)
    )
    scores = (Score("tool_calls", "tool_calls", 0.5, False, "1 of 2", "d", label="fail"),)
    return RunResult(trajectory, "checkout", scores, verdict="failed")


def metrics_by_name(sink: OtlpSink) -> dict[str, Any]:
    (request,) = sink.requests("metrics")
    (rm,) = request.resource_metrics
    assert attrs(rm.resource.attributes)[semconv.SERVICE_NAME] == "tracescore"
    (sm,) = rm.scope_metrics
    assert sm.scope.name == semconv.SCOPE_NAME
    return {m.name: m for m in sm.metrics}


@pytest.mark.parametrize(
    ("sink_protocol", "protocol"), [("grpc", "grpc"), ("http", "http/protobuf")]
)
def test_the_push_carries_every_metric_cumulative(sink_protocol: Any, protocol: Any) -> None:
    with OtlpSink(sink_protocol) as sink:
        telemetry = Telemetry()
        exporter = metric_exporter(sink.endpoint, protocol, headers={"x-team": "evals"})
        telemetry.push_to(CountingExporter(exporter, telemetry, sink.endpoint), 3600)
        telemetry.record_run(scored_run())
        telemetry.spans_forwarded(7)
        telemetry.set_runs_buffered(3)
        telemetry.stop_push(5)  # the final push
        metrics = metrics_by_name(sink)

    score = metrics[semconv.METRIC_EVALUATION_SCORE]
    assert score.unit == "1"
    assert score.histogram.aggregation_temporality == CUMULATIVE
    (point,) = score.histogram.data_points
    assert list(point.explicit_bounds) == list(SCORE_BOUNDS)
    assert (point.count, point.sum, point.min, point.max) == (1, 0.5, 0.5, 0.5)
    assert attrs(point.attributes) == {
        semconv.GEN_AI_EVALUATION_NAME: "tool_calls",
        semconv.GEN_AI_AGENT_NAME: "shop",
        semconv.TRACESCORE_SCENARIO: "checkout",
    }
    forwarded = metrics[semconv.METRIC_SPANS_FORWARDED].sum
    assert forwarded.is_monotonic
    assert forwarded.aggregation_temporality == CUMULATIVE
    assert forwarded.data_points[0].as_int == 7
    assert (
        0 < forwarded.data_points[0].start_time_unix_nano < forwarded.data_points[0].time_unix_nano
    )
    late = metrics[semconv.METRIC_SPANS_LATE].sum.data_points
    assert [p.as_int for p in late] == [0], "zero counters are pushed too"
    dropped = {
        attrs(p.attributes)[semconv.REASON]: p.as_int
        for p in metrics[semconv.METRIC_SPANS_DROPPED].sum.data_points
    }
    assert dropped == dict.fromkeys(semconv.DROP_REASONS, 0)
    assert metrics[semconv.METRIC_RUNS_BUFFERED].gauge.data_points[0].as_int == 3
    (runs,) = metrics[semconv.METRIC_RUNS].sum.data_points
    assert attrs(runs.attributes) == {
        semconv.TRACESCORE_VERDICT: "failed",
        semconv.TRACESCORE_SCENARIO: "checkout",
        semconv.GEN_AI_AGENT_NAME: "shop",
    }
    (result,) = metrics[semconv.METRIC_EVALUATION_RESULTS].sum.data_points
    assert attrs(result.attributes)[semconv.EVALUATION_RESULT] == semconv.RESULT_FAILED


def test_a_failing_push_is_counted_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    telemetry = Telemetry()
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens
    exporter = metric_exporter(endpoint, "http/protobuf", timeout_s=0.5)
    counting = CountingExporter(exporter, telemetry, endpoint)
    telemetry.push_to(counting, 3600, timeout_s=0.5)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert telemetry.push_now(2)
    failures = telemetry.value(
        semconv.METRIC_EXPORT_FAILURES, {semconv.SIGNAL: "metrics", semconv.REASON: "failed"}
    )
    assert failures >= 3
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in warnings] == ["tracescore.export.otlp_metrics"], (
        "once per cause, not at every push, and not the SDK's own line each time"
    )
    assert endpoint in warnings[0].getMessage()
    assert "Failed to export" in warnings[0].getMessage(), "the SDK's words name the cause"
    telemetry.stop_push(0.5)


SERVE = """
scenarios:
  - name: shop
    match: {{agent: shop_agent}}
    gates: [{{type: called_tool, tool: get_weather}}]
receivers: {{grpc: {{endpoint: '127.0.0.1:0'}}, http: null}}
exporter: {{endpoint: '{endpoint}'}}
assembly: {{decision_wait: 50ms}}
service: {{metrics_interval: {interval}}}
"""


@pytest.mark.parametrize("interval", ["null", "100ms"])
def test_serve_pushes_every_interval_or_not_at_all(interval: str) -> None:
    with OtlpSink() as sink:
        config = parse_config(SERVE.format(endpoint=sink.endpoint, interval=interval))
        run = agent_run()
        with ServeThread(config) as serve:
            with grpc.insecure_channel(f"127.0.0.1:{serve.grpc_port}") as channel:
                export = channel.unary_unary(
                    "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
                )
                export(request(run.spans).SerializeToString(), timeout=10)
            sink.wait_for(lambda: len(sink.log_records()) == 1)  # scored
            if interval != "null":  # pushed while running, not only at shutdown
                sink.wait_for(lambda: len(sink.requests("metrics")) >= 2)
            serve.stop()
        pushed = sink.requests("metrics")
        if interval == "null":
            assert pushed == [], "null turns the push off"
            return
        last = metrics_by_name_of(pushed[-1])
        (runs,) = last[semconv.METRIC_RUNS].sum.data_points
        assert runs.as_int == 1, "the final push, at shutdown, has the run"
        (score,) = last[semconv.METRIC_EVALUATION_SCORE].histogram.data_points
        assert (score.count, score.sum) == (1, 1.0)


def metrics_by_name_of(request: Any) -> dict[str, Any]:
    (rm,) = request.resource_metrics
    (sm,) = rm.scope_metrics
    return {m.name: m for m in sm.metrics}


def test_the_push_stays_cumulative_whatever_the_environment_prefers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta")
    with OtlpSink("http") as sink:
        telemetry = Telemetry()
        exporter = metric_exporter(sink.endpoint, "http/protobuf")
        telemetry.push_to(CountingExporter(exporter, telemetry, sink.endpoint), 3600)
        telemetry.spans_forwarded(7)
        telemetry.observe_export_latency("traces", 0.1)
        telemetry.stop_push(5)
        metrics = metrics_by_name(sink)
    assert metrics[semconv.METRIC_SPANS_FORWARDED].sum.aggregation_temporality == CUMULATIVE
    assert metrics[semconv.METRIC_EXPORT_DURATION].histogram.aggregation_temporality == CUMULATIVE
