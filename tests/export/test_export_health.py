"""The exporter per signal and its health: where each signal goes, a backend that refuses a
signal, failures logged once per cause with their endpoint, readiness after `unready_after`.

Real receivers on loopback (OtlpSink, optionally serving only traces as a traces-only backend
does); the unresolvable host is in `.invalid`, which RFC 6761 reserves to never resolve.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from export.test_otlp import FAST_RETRY, traces, until
from support.otlp_sink import OtlpSink, free_port
from tracescore import semconv
from tracescore.config.serve import ExporterSettings
from tracescore.export.metrics import Telemetry
from tracescore.export.otlp import OtlpExporter

SINK_PROTOCOL = {"grpc": "grpc", "http/protobuf": "http"}
PROTOCOLS = list(SINK_PROTOCOL)


def settings(endpoint: str, protocol: str, **kw: Any) -> ExporterSettings:
    options: dict[str, Any] = {"retry": FAST_RETRY, "compression": "none", "timeout": 2.0, **kw}
    return ExporterSettings(endpoint=endpoint, protocol=protocol, **options)


def logs(name: str = "e") -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add(event_name=name)
    return request


def metrics() -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add(name="m")
    metric.gauge.data_points.add(as_int=1)
    return request


def warnings(caplog: pytest.LogCaptureFixture, *words: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and all(w in r.getMessage() for w in words)
    ]


def failures(telemetry: Telemetry, signal: str, *reasons: str) -> float:
    return sum(
        telemetry.value(
            semconv.METRIC_EXPORT_FAILURES, {semconv.SIGNAL: signal, semconv.REASON: reason}
        )
        for reason in reasons
    )


def run(scenario: Callable[[], Any]) -> None:
    asyncio.run(scenario())


def test_each_signal_goes_where_its_section_says() -> None:
    with OtlpSink("grpc") as main, OtlpSink("http") as events:
        config = settings(
            main.endpoint,
            "grpc",
            logs={"endpoint": events.endpoint, "protocol": "http/protobuf"},
            metrics={"enabled": False},
        )
        telemetry = Telemetry()

        async def scenario() -> None:
            exporter = OtlpExporter(config, telemetry)
            await exporter.start()
            assert exporter.submit_traces(traces(2))
            assert exporter.submit_logs(logs())
            assert exporter.submit_metrics(metrics())  # off: accepted, not sent
            await exporter.shutdown(timeout=10)
            assert exporter.dropped_total() == 0

        run(scenario)
        assert len(main.spans()) == 2
        assert main.requests("logs") == []
        assert main.requests("metrics") == []
        assert len(events.log_records()) == 1
        assert events.requests("traces") == []
        assert events.requests("metrics") == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_backend_that_refuses_a_signal_is_warned_about_once_and_sent_it_no_more(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tracescore")
    with OtlpSink(SINK_PROTOCOL[protocol], signals=("traces",)) as backend:
        telemetry = Telemetry()

        async def scenario() -> None:
            exporter = OtlpExporter(settings(backend.endpoint, protocol), telemetry, senders=1)
            await exporter.start()
            for n in range(1, 4):
                assert exporter.submit_logs(logs(f"e{n}"))
                await until(lambda n=n: exporter.dropped_total() >= n, "the logs dropped")
            assert exporter.submit_traces(traces(4))
            await exporter.shutdown(timeout=10)
            assert exporter.problem() is None, "a refused log signal does not make us unready"

        run(scenario)
    assert len(backend.spans()) == 4
    (warning,) = warnings(caplog, "does not accept logs")
    assert backend.endpoint in warning
    assert "exporter.logs.endpoint" in warning
    assert "exporter.logs.enabled: false" in warning
    dropped = {semconv.SIGNAL: "logs", semconv.REASON: semconv.DROP_EXPORT_UNSUPPORTED}
    assert telemetry.value(semconv.METRIC_EXPORT_DROPPED, dropped) == 3
    reason = "unimplemented" if protocol == "grpc" else "http_404"
    assert failures(telemetry, "logs", reason) == 1, "one attempt, then no more"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_failures_are_logged_once_per_cause_and_the_recovery_once(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tracescore")
    sink = OtlpSink(SINK_PROTOCOL[protocol], port=free_port())  # down at first
    telemetry = Telemetry()

    async def scenario() -> None:
        exporter = OtlpExporter(settings(sink.endpoint, protocol), telemetry, senders=1)
        await exporter.start()
        assert exporter.submit_traces(traces(3))
        reasons = ("refused", "unavailable")
        await until(lambda: failures(telemetry, "traces", *reasons) >= 5, "five failed attempts")
        await asyncio.to_thread(sink.start)
        try:
            await until(lambda: len(sink.spans()) == 3, "delivery once the sink is up")
            await exporter.shutdown(timeout=10)
        finally:
            await asyncio.to_thread(sink.stop)

    run(scenario)
    (failing,) = warnings(caplog, "failing")
    assert sink.endpoint in failing
    assert "connection refused" in failing
    recovered = [r.getMessage() for r in caplog.records if "recovered" in r.getMessage()]
    assert len(recovered) == 1
    assert sink.endpoint in recovered[0]
    assert not warnings(caplog, "retrying in"), "no line per retry"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_readiness_fails_after_unready_after_naming_endpoint_and_cause(protocol: str) -> None:
    endpoint = "http://tracescore-test.invalid:4318"
    telemetry = Telemetry()

    async def scenario() -> None:
        exporter = OtlpExporter(settings(endpoint, protocol, unready_after=0.3), telemetry)
        await exporter.start()
        assert exporter.problem() is None
        assert exporter.submit_traces(traces(1))
        await until(lambda: failures(telemetry, "traces", "dns", "unavailable") >= 1, "a failure")
        await until(lambda: exporter.problem() is not None, "readiness to fail")
        problem = exporter.problem()
        assert problem is not None
        assert "tracescore-test.invalid" in problem
        assert "DNS lookup failed" in problem
        await exporter.shutdown(timeout=0.2)
        assert exporter.dropped_total(semconv.DROP_SHUTDOWN) == 1

    run(scenario)


def test_readiness_ignores_the_exporter_when_unready_after_is_null() -> None:
    telemetry = Telemetry()

    async def scenario() -> None:
        config = settings("http://127.0.0.1:9", "http/protobuf", unready_after=None)
        exporter = OtlpExporter(config, telemetry)
        await exporter.start()
        assert exporter.submit_traces(traces(1))
        await until(lambda: failures(telemetry, "traces", "refused") >= 3, "failed attempts")
        assert exporter.problem() is None
        await exporter.shutdown(timeout=0.2)

    run(scenario)


@pytest.mark.parametrize(("status", "unsupported"), [(404, True), (405, True), (501, True),
                                                    (400, False), (503, False)])  # fmt: skip
def test_which_http_statuses_mean_the_backend_does_not_serve_the_signal(
    status: int, unsupported: bool
) -> None:
    from tracescore.export.http_transport import _http_failure

    attempt = _http_failure(status, None, b"")
    assert attempt.unsupported is unsupported
    assert attempt.cause == f"HTTP {status}"
