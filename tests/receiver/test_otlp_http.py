"""OTLP/HTTP receiver answers, as the OTLP spec asks, against a real running pipeline."""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.agent_spans import agent_run, request
from support.native import UPB_CORRUPT, by_path
from support.otlp_sink import OtlpSink
from support.serve_thread import ServeThread
from tracescore import semconv

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def _post(
    port: int,
    body: bytes,
    content_type: str = PROTOBUF,
    headers: dict[str, str] | None = None,
    *,
    scheme: str = "http",
    context: ssl.SSLContext | None = None,
) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(
        f"{scheme}://127.0.0.1:{port}/v1/traces",
        data=body,
        headers={"Content-Type": content_type, **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=10, context=context) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _get(port: int, path: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


def _http_only(settings: str) -> str:
    return f"receivers:\n  grpc: null\n  http: {{endpoint: '127.0.0.1:0', {settings}}}\n"


def _json_body(run_spans: list[Span]) -> bytes:
    # Test-side only: the generic mapping writes ids in base64; OTLP/JSON wants hex.
    doc = MessageToDict(request(run_spans), use_integers_for_enums=True)
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(doc).encode()


def test_protobuf_request_is_answered_in_protobuf_and_forwarded(
    serve: ServeThread, sink: OtlpSink
) -> None:
    run = agent_run(agent="other")
    status, headers, body = _post(serve.http_port, request(run.spans).SerializeToString())
    assert status == 200
    assert headers["Content-Type"] == PROTOBUF
    response = ExportTraceServiceResponse.FromString(body)
    assert not response.HasField("partial_success")
    sink.wait_for(lambda: len(sink.spans()) == len(run.spans))


def test_json_request_is_answered_in_json(serve: ServeThread, sink: OtlpSink) -> None:
    run = agent_run(agent="other")
    status, headers, body = _post(serve.http_port, _json_body(run.spans), JSON)
    assert (status, headers["Content-Type"], json.loads(body)) == (200, JSON, {})
    sink.wait_for(lambda: len(sink.spans()) == len(run.spans))
    assert {s.span.span_id for s in sink.spans()} == {s.span_id for s in run.spans}


def test_gzip_bodies_are_accepted(serve: ServeThread, sink: OtlpSink) -> None:
    run = agent_run(agent="other")
    body = gzip.compress(request(run.spans).SerializeToString())
    status, _, _ = _post(serve.http_port, body, headers={"Content-Encoding": "gzip"})
    assert status == 200
    sink.wait_for(lambda: len(sink.spans()) == len(run.spans))


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_invalid_spans_get_partial_success_with_count_and_message(
    serve: ServeThread, content_type: str
) -> None:
    run = agent_run(agent="other")
    bad = Span(trace_id=b"\x01" * 16, span_id=bytes(8), name="no id")
    spans = [*run.spans, bad]
    body = request(spans).SerializeToString() if content_type == PROTOBUF else _json_body(spans)
    status, headers, answer = _post(serve.http_port, body, content_type)
    assert status == 200
    assert headers["Content-Type"] == content_type
    if content_type == PROTOBUF:
        partial = ExportTraceServiceResponse.FromString(answer).partial_success
        rejected, message = partial.rejected_spans, partial.error_message
    else:
        doc = json.loads(answer)["partialSuccess"]
        rejected, message = int(doc["rejectedSpans"]), doc["errorMessage"]
    assert rejected == 1
    assert message.startswith("1 span(s) rejected: ")
    assert "span_id must be 8 non-zero bytes" in message
    assert "'no id'" in message


def test_malformed_protobuf_gets_400_with_a_status_naming_the_problem(serve: ServeThread) -> None:
    status, headers, body = _post(serve.http_port, b"\x0a\xff\xff\xff\x0f garbage")
    assert status == 400
    assert headers["Content-Type"] == PROTOBUF
    detail = Status.FromString(body)
    assert detail.code == 3  # INVALID_ARGUMENT
    assert detail.message == "body: not an OTLP ExportTraceServiceRequest: " + by_path(
        "length runs past the end of its message (byte 0)", UPB_CORRUPT + "Wire format was corrupt"
    )
    # The service keeps running.
    assert _get(serve.http_port, "/healthz")[0] == 200


def test_invalid_utf8_in_a_span_name_gets_400_naming_the_field(serve: ServeThread) -> None:
    body = request([Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="\x01name\x01")])
    status, _, answer = _post(
        serve.http_port, body.SerializeToString().replace(b"\x01name\x01", b"\xffname\xff")
    )
    assert status == 400
    assert by_path(
        "resource_spans[0].scope_spans[0].spans[0].name: invalid UTF-8",
        UPB_CORRUPT + "String field had bad UTF-8",
    ) in (Status.FromString(answer).message)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{not json", "body is not valid JSON"),
        (b'{"resourceSpans": {}}', "resourceSpans: expected a list, got dict"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}',
            "resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hex digits, got 'xyz'",
        ),
    ],
)
def test_malformed_json_gets_400_in_json_naming_the_path(
    serve: ServeThread, body: bytes, expected: str
) -> None:
    status, headers, answer = _post(serve.http_port, body, JSON)
    assert (status, headers["Content-Type"]) == (400, JSON)
    assert expected in json.loads(answer)["message"]


def test_unsupported_content_type_gets_415(serve: ServeThread) -> None:
    status, _, body = _post(serve.http_port, b"x", "text/plain")
    assert status == 415
    assert "unsupported Content-Type 'text/plain'" in Status.FromString(body).message


def test_unsupported_content_encoding_gets_400(serve: ServeThread) -> None:
    status, _, body = _post(serve.http_port, b"x", headers={"Content-Encoding": "br"})
    assert status == 400
    assert "unsupported Content-Encoding 'br'" in Status.FromString(body).message


def test_corrupt_gzip_gets_400(serve: ServeThread) -> None:
    status, _, body = _post(serve.http_port, b"not gzip", headers={"Content-Encoding": "gzip"})
    assert status == 400
    assert "body is not valid gzip" in Status.FromString(body).message


def test_oversized_body_gets_413(serve_factory: Callable[..., ServeThread]) -> None:
    serve = serve_factory(receivers=_http_only("max_body_size: 1KiB"))
    body = request(agent_run(agent="other", tools=["a"] * 20).spans).SerializeToString()
    assert len(body) > 1024
    status, _, answer = _post(serve.http_port, body)
    assert status == 413
    detail = Status.FromString(answer)
    assert detail.code == 8  # RESOURCE_EXHAUSTED
    assert "exceeds 1024" in detail.message


def _post_chunked(port: int, pieces: list[bytes]) -> tuple[int, bytes]:
    """POST pieces as a chunked body (no Content-Length: the size is known once read)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST",
            "/v1/traces",
            body=iter(pieces),
            headers={"Content-Type": PROTOBUF},
            encode_chunked=True,
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_a_chunked_body_is_read_whole_and_refused_past_the_limit(
    serve_factory: Callable[..., ServeThread],
) -> None:
    serve = serve_factory(receivers=_http_only("max_body_size: 4KiB"))
    body = request(agent_run(agent="other", tools=["a"] * 4).spans).SerializeToString()
    assert 1024 < len(body) <= 4096
    pieces = [body[n : n + 300] for n in range(0, len(body), 300)]  # many chunks, one body
    status, answer = _post_chunked(serve.http_port, pieces)
    assert status == 200, answer
    assert not ExportTraceServiceResponse.FromString(answer).HasField("partial_success")
    big = request(agent_run(agent="other", tools=["a"] * 40).spans).SerializeToString()
    assert len(big) > 4096
    status, answer = _post_chunked(serve.http_port, [big[: len(big) // 2], big[len(big) // 2 :]])
    assert status == 413
    assert "exceeds 4096 bytes" in Status.FromString(answer).message
    status, _ = _post_chunked(serve.http_port, pieces)  # and the service goes on
    assert status == 200


def test_gzip_bomb_is_refused_with_413(serve_factory: Callable[..., ServeThread]) -> None:
    serve = serve_factory(receivers=_http_only("max_body_size: 1MiB"))
    bomb = gzip.compress(b"\x00" * (64 * 1024 * 1024))  # 64 MiB of zeros, ~64 KiB on the wire
    assert len(bomb) < 1024 * 1024
    status, _, answer = _post(serve.http_port, bomb, headers={"Content-Encoding": "gzip"})
    assert status == 413
    assert "inflates to more than 1048576 bytes" in Status.FromString(answer).message


def test_requests_without_the_token_get_401(
    serve_factory: Callable[..., ServeThread], monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    monkeypatch.setenv("TS_TEST_TOKEN", "s3cret")
    serve = serve_factory(receivers=_http_only("auth: {bearer_token_env: TS_TEST_TOKEN}"))
    body = request(agent_run(agent="other").spans).SerializeToString()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
        status, answer_headers, answer = _post(serve.http_port, body, headers=headers)
        assert status == 401
        assert answer_headers["WWW-Authenticate"] == "Bearer"
        assert Status.FromString(answer).code == 16  # UNAUTHENTICATED
    assert sink.spans() == []
    status, _, _ = _post(serve.http_port, body, headers={"Authorization": "Bearer s3cret"})
    assert status == 200


def test_a_full_buffer_gets_503_with_retry_after_then_recovers(
    serve_factory: Callable[..., ServeThread], sink: OtlpSink
) -> None:
    serve = serve_factory("assembly: {max_runs: 1, decision_wait: 200ms}\n")
    first, second = agent_run(seed=1), agent_run(seed=2)
    assert _post(serve.http_port, request(first.spans).SerializeToString())[0] == 200
    status, headers, answer = _post(serve.http_port, request(second.spans).SerializeToString())
    assert status == 503
    assert int(headers["Retry-After"]) >= 1
    detail = Status.FromString(answer)
    assert detail.code == 14  # UNAVAILABLE
    assert "assembly.max_runs" in detail.message
    retry = RetryInfo()
    assert detail.details[0].Unpack(retry)
    assert retry.retry_delay.seconds >= 1
    sink.wait_for(lambda: len(sink.spans()) == len(first.spans))  # first run scored, freed
    assert _post(serve.http_port, request(second.spans).SerializeToString())[0] == 200
    sink.wait_for(lambda: len(sink.spans()) == len(first.spans) + len(second.spans))


def test_refused_requests_are_told_to_come_back_in_turn_in_whole_seconds(
    serve_factory: Callable[..., ServeThread],
) -> None:
    serve = serve_factory("assembly: {max_runs: 1, decision_wait: 5s}\n")
    assert _post(serve.http_port, request(agent_run(seed=1).spans).SerializeToString())[0] == 200
    body = request(agent_run(seed=2).spans).SerializeToString()
    waits = []
    for _ in range(3):
        status, headers, _ = _post(serve.http_port, body)
        assert status == 503
        waits.append(int(headers["Retry-After"]))
    # The first when the first run is due (5.25 s, rounded up), each next one an admission
    # interval (about a second: one request got in) later.
    assert waits[0] == 6
    assert waits[1] > waits[0]
    assert waits[2] > waits[1]
    metrics = _get(serve.http_port, "/metrics")[2]
    assert 'tracescore_requests_refused_total{reason="assembly.max_runs"} 3.0' in metrics
    assert 'tracescore_requests_refused_total{reason="exporter.queue_size"} 0.0' in metrics


def test_health_readiness_and_metrics_endpoints(serve: ServeThread) -> None:
    assert _get(serve.http_port, "/healthz")[:2] == (200, "text/plain; charset=utf-8")
    assert _get(serve.http_port, "/readyz")[0] == 200
    _post(serve.http_port, request(agent_run(agent="other").spans).SerializeToString())
    status, content_type, text = _get(serve.http_port, "/metrics")
    assert status == 200
    assert content_type.startswith("text/plain; version=0.0.4")
    name = semconv.METRIC_SPANS_RECEIVED.replace(".", "_")
    line = next(li for li in text.splitlines() if li.startswith(f"{name}_total "))
    assert float(line.split()[1]) == len(agent_run(agent="other").spans)


def test_tls(
    serve_factory: Callable[..., ServeThread], certificate: tuple[Path, Path], sink: OtlpSink
) -> None:
    cert, key = certificate
    serve = serve_factory(
        receivers="receivers:\n  grpc: null\n  http:\n    endpoint: '127.0.0.1:0'\n"
        f"    tls: {{cert_file: '{cert}', key_file: '{key}'}}\n"
    )
    run = agent_run(agent="other")
    context = ssl.create_default_context(cafile=str(cert))
    body = request(run.spans).SerializeToString()
    status, _, _ = _post(serve.http_port, body, scheme="https", context=context)
    assert status == 200
    sink.wait_for(lambda: len(sink.spans()) == len(run.spans))
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        _post(serve.http_port, body)  # plaintext to a TLS port
