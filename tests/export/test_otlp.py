"""OtlpExporter against a real OTLP receiver on loopback, over gRPC and HTTP/protobuf.

Every test accounts for every span: delivered (`tracescore.spans.forwarded`) or dropped with a
reason (`tracescore.spans.dropped{reason}`), never silently gone.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from export.otlp_receiver import Failure, TestReceiver, free_port
from tracescore import semconv
from tracescore.config.serve import ClientTlsSettings, ExporterSettings, RetrySettings
from tracescore.export.metrics import Telemetry
from tracescore.export.otlp import OtlpExporter, count_items
from tracescore.retry import parse_retry_after

PROTOCOLS = ["grpc", "http/protobuf"]
FAST_RETRY = RetrySettings(initial_interval=0.02, max_interval=0.1, max_elapsed_time=60)
T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


def traces(n_spans: int, service: str = "shop") -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.add(key="service.name").value.string_value = service
    ss = rs.scope_spans.add()
    for i in range(n_spans):
        ss.spans.add(
            trace_id=os.urandom(16), span_id=os.urandom(8), name=f"span {i}", start_time_unix_nano=1
        )
    return req


def settings(receiver_or_url: TestReceiver | str, protocol: str, **kw: Any) -> ExporterSettings:
    url = receiver_or_url if isinstance(receiver_or_url, str) else receiver_or_url.endpoint
    options: dict[str, Any] = {"retry": FAST_RETRY, "compression": "none", **kw}
    return ExporterSettings(endpoint=url, protocol=protocol, **options)


async def until(cond: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Poll for a condition; the generous timeout only guards against a hung test."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def forwarded(t: Telemetry) -> float:
    return t.value(semconv.METRIC_SPANS_FORWARDED)


def dropped(t: Telemetry, reason: str) -> float:
    return t.value(semconv.METRIC_SPANS_DROPPED, {semconv.REASON: reason})


def metrics_request() -> ExportMetricsServiceRequest:
    """A small metrics request (the service's own push goes through the SDK's exporter)."""
    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add(name="m")
    metric.sum.data_points.add(as_int=1)
    metric.sum.data_points.add(as_int=2)
    return request


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_traces_logs_and_metrics_arrive_unchanged_with_headers(
    protocol: str, compression: str
) -> None:
    async def scenario() -> None:
        receiver = TestReceiver(protocol)
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(
            settings(receiver, protocol, compression=compression, headers={"X-Tenant": "acme"}),
            telemetry,
        )
        await exporter.start()
        sent = traces(3)
        logs = ExportLogsServiceRequest()
        logs.resource_logs.add().scope_logs.add().log_records.add(event_name="e")
        metrics = metrics_request()
        assert exporter.submit_traces(sent)
        assert exporter.submit_logs(logs)
        assert exporter.submit_metrics(metrics)
        await exporter.shutdown(timeout=10)
        await receiver.stop()

        assert receiver.items("traces") == [sent]
        assert receiver.items("logs") == [logs]
        assert receiver.items("metrics") == [metrics]
        for r in receiver.received:
            assert r.headers.get("x-tenant", r.headers.get("X-Tenant")) == "acme"
            if protocol == "http/protobuf":
                assert r.headers["Content-Type"] == "application/x-protobuf"
                assert r.encoding == ("gzip" if compression == "gzip" else "")
        assert forwarded(telemetry) == 3
        assert telemetry.value(semconv.METRIC_EXPORT_FAILURES, {semconv.SIGNAL: "traces"}) == 0

    run(scenario())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_downstream_down_then_up_loses_nothing(protocol: str) -> None:
    async def scenario() -> None:
        port = free_port()
        telemetry = Telemetry()
        exporter = OtlpExporter(
            settings(f"http://127.0.0.1:{port}", protocol, timeout=2.0), telemetry, senders=2
        )
        await exporter.start()
        sent = [traces(5) for _ in range(20)]
        for req in sent:
            assert exporter.submit_traces(req)

        def failures() -> float:
            reasons = ("unavailable", "refused", "connection", "timeout")
            return sum(
                telemetry.value(
                    semconv.METRIC_EXPORT_FAILURES,
                    {semconv.SIGNAL: "traces", semconv.REASON: reason},
                )
                for reason in reasons
            )

        await until(lambda: failures() >= 3, "export failures while downstream is down")
        assert forwarded(telemetry) == 0
        receiver = TestReceiver(protocol, port=port)
        await receiver.start()
        await exporter.shutdown(timeout=30)
        await receiver.stop()

        got = {bytes(s.span_id) for s in receiver.spans()}
        want = {
            bytes(s.span_id) for req in sent for s in req.resource_spans[0].scope_spans[0].spans
        }
        assert got == want
        assert forwarded(telemetry) == 100
        assert dropped(telemetry, semconv.DROP_SHUTDOWN) == 0

    run(scenario())


@pytest.mark.parametrize(
    ("protocol", "failure"),
    [
        ("grpc", Failure(grpc_code=grpc.StatusCode.INVALID_ARGUMENT)),
        ("grpc", Failure(grpc_code=grpc.StatusCode.RESOURCE_EXHAUSTED)),  # no RetryInfo
        ("http/protobuf", Failure(http_status=400)),
        ("http/protobuf", Failure(http_status=500)),
    ],
)
def test_permanent_rejection_is_not_retried_and_is_counted(protocol: str, failure: Failure) -> None:
    async def scenario() -> None:
        receiver = TestReceiver(protocol)
        receiver.fail_next("traces", failure)
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, protocol), telemetry)
        await exporter.start()
        exporter.submit_traces(traces(7))
        await exporter.shutdown(timeout=10)
        await receiver.stop()

        assert receiver.attempts["traces"] == 1
        assert receiver.received == []
        assert dropped(telemetry, semconv.DROP_EXPORT_REJECTED) == 7
        assert forwarded(telemetry) == 0

    run(scenario())


@pytest.mark.parametrize(
    ("protocol", "failure"),
    [
        ("grpc", Failure(grpc_code=grpc.StatusCode.UNAVAILABLE)),
        ("grpc", Failure(grpc_code=grpc.StatusCode.DEADLINE_EXCEEDED)),
        ("grpc", Failure(grpc_code=grpc.StatusCode.RESOURCE_EXHAUSTED, retry_delay=0.0)),
        ("http/protobuf", Failure(http_status=429, retry_after="0")),
        ("http/protobuf", Failure(http_status=502)),
        ("http/protobuf", Failure(http_status=503, retry_after="0")),
        ("http/protobuf", Failure(http_status=504)),
    ],
)
def test_retryable_failure_is_retried_until_delivered(protocol: str, failure: Failure) -> None:
    async def scenario() -> None:
        receiver = TestReceiver(protocol)
        receiver.fail_next("traces", failure, failure)
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, protocol), telemetry)
        await exporter.start()
        exporter.submit_traces(traces(4))
        await exporter.shutdown(timeout=10)
        await receiver.stop()

        assert receiver.attempts["traces"] == 3
        assert len(receiver.spans()) == 4
        assert forwarded(telemetry) == 4

    run(scenario())


@pytest.mark.parametrize(
    ("protocol", "failure"),
    [
        ("grpc", Failure(grpc_code=grpc.StatusCode.RESOURCE_EXHAUSTED, retry_delay=0.0)),
        ("http/protobuf", Failure(http_status=503, retry_after="0")),
    ],
)
def test_server_retry_delay_overrides_backoff(protocol: str, failure: Failure) -> None:
    # Backoff alone would wait 60 s, past the shutdown deadline: the span would be dropped.
    slow = RetrySettings(initial_interval=60, max_interval=60, max_elapsed_time=0)

    async def scenario() -> None:
        receiver = TestReceiver(protocol)
        receiver.fail_next("traces", failure)
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, protocol, retry=slow), telemetry)
        await exporter.start()
        exporter.submit_traces(traces(1))
        await exporter.shutdown(timeout=5)
        await receiver.stop()
        assert forwarded(telemetry) == 1
        assert dropped(telemetry, semconv.DROP_SHUTDOWN) == 0

    run(scenario())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_partial_success_counts_rejected_spans_as_dropped(protocol: str) -> None:
    async def scenario() -> None:
        receiver = TestReceiver(protocol)
        receiver.fail_next("traces", Failure(rejected=2))
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, protocol), telemetry)
        await exporter.start()
        exporter.submit_traces(traces(5))
        await exporter.shutdown(timeout=10)
        await receiver.stop()
        assert forwarded(telemetry) == 3
        assert dropped(telemetry, semconv.DROP_EXPORT_PARTIAL) == 2

    run(scenario())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_retries_give_up_after_max_elapsed_time(protocol: str) -> None:
    async def scenario() -> None:
        port = free_port()
        telemetry = Telemetry()
        retry = RetrySettings(initial_interval=0.05, max_interval=0.05, max_elapsed_time=0.2)
        exporter = OtlpExporter(
            settings(f"http://127.0.0.1:{port}", protocol, retry=retry), telemetry
        )
        await exporter.start()
        exporter.submit_traces(traces(6))
        await until(
            lambda: dropped(telemetry, semconv.DROP_EXPORT_RETRIES_EXHAUSTED) > 0, "give-up"
        )
        await exporter.shutdown(timeout=5)
        assert dropped(telemetry, semconv.DROP_EXPORT_RETRIES_EXHAUSTED) == 6
        assert forwarded(telemetry) == 0

    run(scenario())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_shutdown_deadline_counts_what_is_left_as_dropped(protocol: str) -> None:
    async def scenario() -> None:
        port = free_port()
        telemetry = Telemetry()
        exporter = OtlpExporter(
            settings(f"http://127.0.0.1:{port}", protocol), telemetry, senders=1
        )
        await exporter.start()
        for _ in range(5):
            exporter.submit_traces(traces(3, service=f"svc{_}"))
        await exporter.shutdown(timeout=0.3)
        assert not exporter.submit_traces(traces(1)), "a closed exporter accepts nothing"
        assert dropped(telemetry, semconv.DROP_SHUTDOWN) == 15
        assert forwarded(telemetry) == 0

    run(scenario())


def test_queue_full_by_items_and_by_bytes_refuses_and_recovers() -> None:
    async def scenario() -> None:
        receiver = TestReceiver("http/protobuf")
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, "http/protobuf", queue_size=3), telemetry)
        # Not started: nothing drains the queue yet.
        assert all(exporter.submit_traces(traces(1)) for _ in range(3))
        assert not exporter.has_capacity()
        assert not exporter.submit_traces(traces(1))

        big = traces(50)
        by_bytes = OtlpExporter(
            settings(receiver, "http/protobuf"), Telemetry(), max_queue_bytes=big.ByteSize() - 10
        )
        assert by_bytes.submit_traces(big), "an oversized request still enters an empty queue"
        assert not by_bytes.has_capacity()
        assert not by_bytes.submit_traces(traces(1))

        await exporter.start()
        await exporter.shutdown(timeout=10)
        await receiver.stop()
        assert forwarded(telemetry) == 3
        assert exporter.has_capacity() is False  # closed

    run(scenario())


def test_queued_requests_are_merged_into_fewer_exports() -> None:
    async def scenario() -> None:
        receiver = TestReceiver("grpc")
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, "grpc"), telemetry, senders=1)
        sent = [traces(2, service=f"svc{i}") for i in range(10)]
        for req in sent:
            exporter.submit_traces(req.SerializeToString(), spans=2)  # bytes, as received
        await exporter.start()
        await exporter.shutdown(timeout=10)
        await receiver.stop()
        assert len(receiver.items("traces")) == 1
        merged = receiver.items("traces")[0]
        assert list(merged.resource_spans) == [rs for req in sent for rs in req.resource_spans]
        assert forwarded(telemetry) == 20

    run(scenario())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_requests_arriving_while_a_sender_lingers_leave_in_one_export(protocol: str) -> None:
    """`serve` forwards each received request as it arrives; a sender woken by the first waits
    (`linger`) so that the next ones merge into its export call. Storage's tokens of every
    merged request are settled, each once, and nothing is sent twice."""

    async def scenario() -> None:
        receiver = TestReceiver(protocol)
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, protocol), telemetry, linger=60.0)
        settled: list[Any] = []
        exporter.on_settled = settled.extend
        await exporter.start()
        for _ in range(5):  # the senders find the queue empty and wait for a request
            await asyncio.sleep(0)
        sent = [traces(2, service=f"svc{i}") for i in range(3)]
        for i, req in enumerate(sent):
            assert exporter.submit_traces(req.SerializeToString(), 2, token=f"t{i}")
            for _ in range(5):  # the senders wake, find the queue short of a batch, linger
                await asyncio.sleep(0)
        assert forwarded(telemetry) == 0
        await exporter.shutdown(timeout=10)  # cuts the linger short: the queue goes now
        await receiver.stop()
        assert len(receiver.items("traces")) == 1
        merged = receiver.items("traces")[0]
        assert list(merged.resource_spans) == [rs for req in sent for rs in req.resource_spans]
        assert forwarded(telemetry) == 6
        assert sorted(settled) == ["t0", "t1", "t2"]

    run(scenario())


def test_a_whole_batch_waiting_is_sent_without_lingering() -> None:
    async def scenario() -> None:
        receiver = TestReceiver("grpc")
        await receiver.start()
        telemetry = Telemetry()
        request = traces(4)
        body = request.SerializeToString()
        exporter = OtlpExporter(
            settings(receiver, "grpc"), telemetry, linger=60.0, max_batch_bytes=len(body)
        )
        await exporter.start()
        assert exporter.submit_traces(body, 4)
        assert exporter.submit_traces(body, 4)
        # Each request fills a batch: delivered long before the linger would end.
        await until(lambda: forwarded(telemetry) == 8, "delivery without lingering")
        await exporter.shutdown(timeout=10)
        await receiver.stop()
        assert receiver.items("traces") == [request, request]

    run(scenario())


def test_a_full_queue_is_sent_without_lingering() -> None:
    async def scenario() -> None:
        receiver = TestReceiver("http/protobuf")
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(
            settings(receiver, "http/protobuf", queue_size=2), telemetry, linger=60.0
        )
        await exporter.start()
        for _ in range(5):  # the senders find the queue empty and wait for a request
            await asyncio.sleep(0)
        assert exporter.submit_traces(traces(1))
        for _ in range(5):  # woken, they linger: one request is no batch
            await asyncio.sleep(0)
        assert exporter.submit_traces(traces(1))  # the queue is full: no reason to wait
        await until(lambda: forwarded(telemetry) == 2, "delivery without lingering")
        assert exporter.has_capacity()
        await exporter.shutdown(timeout=10)
        await receiver.stop()

    run(scenario())


def test_submit_from_another_thread_is_delivered() -> None:
    async def scenario() -> None:
        receiver = TestReceiver("http/protobuf")
        await receiver.start()
        telemetry = Telemetry()
        exporter = OtlpExporter(settings(receiver, "http/protobuf"), telemetry)
        await exporter.start()
        results: list[bool] = []
        worker = threading.Thread(
            target=lambda: results.extend(exporter.submit_traces(traces(2)) for _ in range(10))
        )
        worker.start()
        await asyncio.to_thread(worker.join)
        await until(lambda: forwarded(telemetry) == 20, "delivery of thread submissions")
        await exporter.shutdown(timeout=10)
        await receiver.stop()
        assert results == [True] * 10

    run(scenario())


def test_shutdown_without_start_is_safe_and_idempotent() -> None:
    async def scenario() -> None:
        exporter = OtlpExporter(settings("http://127.0.0.1:9", "grpc"), Telemetry())
        await exporter.shutdown(timeout=1)
        await exporter.shutdown(timeout=1)

    run(scenario())


def test_count_items_counts_spans_records_and_points() -> None:
    assert count_items("traces", traces(3)) == 3
    assert count_items("traces", traces(4).SerializeToString()) == 4
    logs = ExportLogsServiceRequest()
    logs.resource_logs.add().scope_logs.add().log_records.add()
    assert count_items("logs", logs) == 1
    request = metrics_request()
    points = sum(
        len(getattr(m, m.WhichOneof("data")).data_points)
        for m in request.resource_metrics[0].scope_metrics[0].metrics
    )
    assert count_items("metrics", request) == points > 0


@pytest.mark.parametrize(
    ("header", "expected"),
    [("0", 0.0), ("7", 7.0), (None, None), ("soon", None), ("", None)],
)
def test_retry_after_seconds(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header) == expected


def test_retry_after_http_date() -> None:
    now = 1_800_000_000.0
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(header, now=now) == pytest.approx(30.0)
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tls_endpoint_with_its_ca_delivers_and_without_it_does_not(
    protocol: str, certificate: tuple[Path, Path]
) -> None:
    cert, _ = certificate

    async def scenario() -> None:
        receiver = TestReceiver(protocol, tls=certificate)
        await receiver.start()
        trusted = Telemetry()
        exporter = OtlpExporter(
            settings(receiver, protocol, tls=ClientTlsSettings(ca_file=str(cert))), trusted
        )
        await exporter.start()
        exporter.submit_traces(traces(3))
        await exporter.shutdown(timeout=10)

        untrusted = Telemetry()  # system trust store: the self-signed certificate fails
        retry = RetrySettings(initial_interval=0.02, max_interval=0.05, max_elapsed_time=0.3)
        stranger = OtlpExporter(settings(receiver, protocol, retry=retry), untrusted)
        await stranger.start()
        stranger.submit_traces(traces(2))
        await stranger.shutdown(timeout=10)
        await receiver.stop()

        assert receiver.endpoint.startswith("https://")
        assert forwarded(trusted) == 3
        assert len(receiver.spans()) == 3
        assert forwarded(untrusted) == 0
        assert dropped(untrusted, semconv.DROP_EXPORT_RETRIES_EXHAUSTED) == 2

    run(scenario())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_receiver_requiring_client_certificates_gets_the_configured_one(
    protocol: str, certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate  # self-signed: it is its own CA, for the server and the client

    async def scenario() -> None:
        receiver = TestReceiver(protocol, tls=certificate, client_ca=cert)
        await receiver.start()
        with_cert = Telemetry()
        tls = ClientTlsSettings(ca_file=str(cert), cert_file=str(cert), key_file=str(key))
        exporter = OtlpExporter(settings(receiver, protocol, tls=tls), with_cert)
        await exporter.start()
        exporter.submit_traces(traces(3))
        await exporter.shutdown(timeout=10)

        without = Telemetry()
        retry = RetrySettings(initial_interval=0.02, max_interval=0.05, max_elapsed_time=0.3)
        anonymous = OtlpExporter(
            settings(receiver, protocol, tls=ClientTlsSettings(ca_file=str(cert)), retry=retry),
            without,
        )
        await anonymous.start()
        anonymous.submit_traces(traces(2))
        await anonymous.shutdown(timeout=10)
        await receiver.stop()

        assert forwarded(with_cert) == 3
        assert len(receiver.spans()) == 3
        assert forwarded(without) == 0
        assert dropped(without, semconv.DROP_EXPORT_RETRIES_EXHAUSTED) == 2

    run(scenario())
