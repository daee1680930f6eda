"""OTLP/gRPC receiver status codes, as the OTLP spec asks, against a real running pipeline."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.agent_spans import agent_run, request
from support.native import UPB_CORRUPT, by_path
from support.otlp_sink import OtlpSink
from support.serve_thread import ServeThread

METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def _export(
    port: int,
    body: bytes,
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    compression: grpc.Compression | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    timeout: float = 10,
) -> ExportTraceServiceResponse:
    target = f"127.0.0.1:{port}"
    channel = (
        grpc.secure_channel(target, credentials)
        if credentials
        else grpc.insecure_channel(target, options=[("grpc.max_send_message_length", -1)])
    )
    with channel:
        call = channel.unary_unary(METHOD)  # raw bytes both ways
        answer = call(body, timeout=timeout, metadata=metadata, compression=compression)
    return ExportTraceServiceResponse.FromString(answer)


def _grpc_only(settings: str = "") -> str:
    return f"receivers:\n  http: null\n  grpc: {{endpoint: '127.0.0.1:0'{settings}}}\n"


def test_export_is_forwarded_and_answered_without_partial_success(
    serve: ServeThread, sink: OtlpSink
) -> None:
    run = agent_run(agent="other")
    response = _export(serve.grpc_port, request(run.spans).SerializeToString())
    assert not response.HasField("partial_success")
    sink.wait_for(lambda: len(sink.spans()) == len(run.spans))


def test_invalid_spans_get_partial_success(serve: ServeThread) -> None:
    bad = Span(trace_id=b"\x01" * 3, span_id=b"\x02" * 8, name="short trace id")
    response = _export(serve.grpc_port, request([*agent_run().spans, bad]).SerializeToString())
    assert response.partial_success.rejected_spans == 1
    assert "trace_id must be 16 non-zero bytes, got '010101'" in (
        response.partial_success.error_message
    )


def test_malformed_request_gets_invalid_argument(serve: ServeThread) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _export(serve.grpc_port, b"\x0a\xff\xff\xff\x0f garbage")
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == "body: not an OTLP ExportTraceServiceRequest: " + by_path(
        "length runs past the end of its message (byte 0)", UPB_CORRUPT + "Wire format was corrupt"
    )


def test_invalid_utf8_in_a_span_name_gets_invalid_argument_naming_the_field(
    serve: ServeThread,
) -> None:
    body = request([Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="\x01name\x01")])
    with pytest.raises(grpc.RpcError) as caught:
        _export(serve.grpc_port, body.SerializeToString().replace(b"\x01name\x01", b"\xffname\xff"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert by_path(
        "resource_spans[0].scope_spans[0].spans[0].name: invalid UTF-8",
        UPB_CORRUPT + "String field had bad UTF-8",
    ) in (caught.value.details())


def test_oversized_request_gets_resource_exhausted(
    serve_factory: Callable[..., ServeThread],
) -> None:
    serve = serve_factory(receivers=_grpc_only(", max_body_size: 1KiB"))
    body = request(agent_run(tools=["a"] * 20).spans).SerializeToString()
    with pytest.raises(grpc.RpcError) as caught:
        _export(serve.grpc_port, body)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_gzip_bomb_gets_resource_exhausted(serve_factory: Callable[..., ServeThread]) -> None:
    serve = serve_factory(receivers=_grpc_only(", max_body_size: 1MiB"))
    with pytest.raises(grpc.RpcError) as caught:
        _export(serve.grpc_port, bytes(16 * 1024 * 1024), compression=grpc.Compression.Gzip)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_calls_without_the_token_get_unauthenticated(
    serve_factory: Callable[..., ServeThread], monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    monkeypatch.setenv("TS_GRPC_TOKEN", "t0ken")
    serve = serve_factory(receivers=_grpc_only(", auth: {bearer_token_env: TS_GRPC_TOKEN}"))
    body = request(agent_run(agent="other").spans).SerializeToString()
    for metadata in ((), (("authorization", "Bearer nope"),)):
        with pytest.raises(grpc.RpcError) as caught:
            _export(serve.grpc_port, body, metadata=metadata)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert sink.spans() == []
    _export(serve.grpc_port, body, metadata=(("authorization", "Bearer t0ken"),))


def test_a_full_buffer_gets_unavailable_with_retry_info_then_recovers(
    serve_factory: Callable[..., ServeThread], sink: OtlpSink
) -> None:
    serve = serve_factory("assembly: {max_runs: 1, decision_wait: 200ms}\n")
    first, second = agent_run(seed=1), agent_run(seed=2)
    _export(serve.grpc_port, request(first.spans).SerializeToString())
    with pytest.raises(grpc.RpcError) as caught:
        _export(serve.grpc_port, request(second.spans).SerializeToString())
    error = caught.value
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert "assembly.max_runs" in error.details()
    trailing = dict(error.trailing_metadata())
    delay = RetryInfo.FromString(trailing["google.rpc.retryinfo-bin"]).retry_delay
    # When space frees, in fractions of a second: the first run is due decision_wait (0.2 s)
    # after its last span and scored within a tick (0.25 s) of that.
    assert 0 < delay.seconds + delay.nanos / 1e9 <= 0.45
    status = Status.FromString(trailing["grpc-status-details-bin"])
    assert status.code == grpc.StatusCode.UNAVAILABLE.value[0]
    sink.wait_for(lambda: len(sink.spans()) == len(first.spans))
    _export(serve.grpc_port, request(second.spans).SerializeToString())
    sink.wait_for(lambda: len(sink.spans()) == len(first.spans) + len(second.spans))


def _refused_delay(port: int, body: bytes) -> float:
    with pytest.raises(grpc.RpcError) as caught:
        _export(port, body)
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    trailing = dict(caught.value.trailing_metadata())
    delay = RetryInfo.FromString(trailing["google.rpc.retryinfo-bin"]).retry_delay
    return float(delay.seconds + delay.nanos / 1e9)


def test_refused_requests_are_told_to_come_back_in_turn(
    serve_factory: Callable[..., ServeThread],
) -> None:
    serve = serve_factory("assembly: {max_runs: 1, decision_wait: 5s}\n")
    _export(serve.grpc_port, request(agent_run(seed=1).spans).SerializeToString())
    body = request(agent_run(seed=2).spans).SerializeToString()
    delays = [_refused_delay(serve.grpc_port, body) for _ in range(3)]
    # The first when the first run is due (decision_wait and a tick), each next one later by
    # the interval requests were admitted at: one in the last second or two.
    assert 4.5 < delays[0] <= 5.25
    assert delays[1] - delays[0] > 0.4
    assert delays[2] - delays[1] > 0.4


def test_a_call_its_sender_gave_up_on_is_not_taken(serve: ServeThread, sink: OtlpSink) -> None:
    # The loop is busy (a long tick, say) for longer than the sender waits.
    busy = threading.Thread(target=serve.call, args=(lambda: time.sleep(0.8),))
    busy.start()
    time.sleep(0.1)
    given_up, taken = agent_run(agent="other", seed=1), agent_run(agent="other", seed=2)
    with pytest.raises(grpc.RpcError) as caught:
        _export(serve.grpc_port, request(given_up.spans).SerializeToString(), timeout=0.2)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    busy.join()
    # The abandoned call reaches the loop first; had it been taken, its spans would go out
    # before or with the next call's.
    _export(serve.grpc_port, request(taken.spans).SerializeToString())
    sink.wait_for(lambda: len(sink.spans()) >= len(taken.spans))
    time.sleep(0.3)
    assert {s.span.span_id for s in sink.spans()} == {s.span_id for s in taken.spans}


def test_tls(
    serve_factory: Callable[..., ServeThread], certificate: tuple[Path, Path], sink: OtlpSink
) -> None:
    cert, key = certificate
    serve = serve_factory(
        receivers=_grpc_only(f", tls: {{cert_file: '{cert}', key_file: '{key}'}}")
    )
    run = agent_run(agent="other")
    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    _export(serve.grpc_port, request(run.spans).SerializeToString(), credentials=credentials)
    sink.wait_for(lambda: len(sink.spans()) == len(run.spans))
