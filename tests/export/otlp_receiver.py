"""A real OTLP receiver for tests: gRPC and HTTP/protobuf on loopback, scriptable failures.

It records every request it accepts (parsed, with its headers) and can be told to fail the next
requests of a signal the way real collectors do: a gRPC status (optionally with RetryInfo in
`grpc-status-details-bin`), an HTTP status (optionally with Retry-After), or a partial success.
It runs on the caller's event loop; `start()` returns once the port accepts connections.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from aiohttp import web
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as logs_svc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc as logs_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics_svc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc as metrics_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace_svc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as trace_grpc

__all__ = ["Failure", "Received", "TestReceiver", "free_port"]

REQUESTS: dict[str, type[Message]] = {
    "traces": trace_svc.ExportTraceServiceRequest,
    "logs": logs_svc.ExportLogsServiceRequest,
    "metrics": metrics_svc.ExportMetricsServiceRequest,
}
RESPONSES: dict[str, type[Message]] = {
    "traces": trace_svc.ExportTraceServiceResponse,
    "logs": logs_svc.ExportLogsServiceResponse,
    "metrics": metrics_svc.ExportMetricsServiceResponse,
}
REJECTED_FIELD = {
    "traces": "rejected_spans",
    "logs": "rejected_log_records",
    "metrics": "rejected_data_points",
}


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Failure:
    """How to answer one request instead of accepting it."""

    grpc_code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    http_status: int = 503
    retry_after: str | None = None
    """HTTP Retry-After header value."""
    retry_delay: float | None = None
    """gRPC RetryInfo delay in seconds (sent in grpc-status-details-bin)."""
    rejected: int = 0
    """When > 0: accept with a partial success rejecting this many items instead of failing."""


@dataclass
class Received:
    """One accepted request."""

    signal: str
    request: Any
    headers: Mapping[str, str]
    encoding: str = ""


@dataclass
class TestReceiver:
    """OTLP receiver on 127.0.0.1:`port` speaking `protocol` (`grpc` or `http/protobuf`)."""

    __test__ = False  # not a test class, despite the name

    protocol: str
    port: int = field(default_factory=free_port)
    received: list[Received] = field(default_factory=list)
    failures: dict[str, list[Failure]] = field(
        default_factory=lambda: {"traces": [], "logs": [], "metrics": []}
    )
    attempts: dict[str, int] = field(default_factory=lambda: {"traces": 0, "logs": 0, "metrics": 0})
    tls: tuple[Path, Path] | None = None
    """(certificate, key): serve TLS; the endpoint becomes https://."""
    client_ca: Path | None = None
    """With `tls`: require a client certificate that this CA certificate signed (mTLS)."""
    _grpc: grpc.aio.Server | None = None
    _http: web.AppRunner | None = None

    @property
    def endpoint(self) -> str:
        """The URL an exporter should be given."""
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def fail_next(self, signal: str, *failures: Failure) -> None:
        """Answer the next requests of `signal` with these failures, in order."""
        self.failures[signal].extend(failures)

    def items(self, signal: str) -> list[Any]:
        """Every accepted request of a signal."""
        return [r.request for r in self.received if r.signal == signal]

    def spans(self) -> list[Any]:
        """Every span received, flattened."""
        return [
            span
            for req in self.items("traces")
            for rs in req.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]

    async def start(self) -> None:
        if self.protocol == "grpc":
            server = grpc.aio.server()
            trace_grpc.add_TraceServiceServicer_to_server(_Servicer(self, "traces"), server)
            logs_grpc.add_LogsServiceServicer_to_server(_Servicer(self, "logs"), server)
            metrics_grpc.add_MetricsServiceServicer_to_server(_Servicer(self, "metrics"), server)
            address = f"127.0.0.1:{self.port}"
            if self.tls:
                cert, key = (p.read_bytes() for p in self.tls)
                ca = self.client_ca.read_bytes() if self.client_ca else None
                credentials = grpc.ssl_server_credentials(
                    [(key, cert)], root_certificates=ca, require_client_auth=ca is not None
                )
                server.add_secure_port(address, credentials)
            else:
                server.add_insecure_port(address)
            await server.start()
            self._grpc = server
        else:
            app = web.Application()
            for signal in REQUESTS:
                app.router.add_post(f"/v1/{signal}", self._http_handler(signal))
            runner = web.AppRunner(app)
            await runner.setup()
            context = None
            if self.tls:
                context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
                context.load_cert_chain(*self.tls)
                if self.client_ca:
                    context.load_verify_locations(self.client_ca)
                    context.verify_mode = ssl.CERT_REQUIRED
            await web.TCPSite(runner, "127.0.0.1", self.port, ssl_context=context).start()
            self._http = runner

    async def stop(self) -> None:
        if self._grpc is not None:
            await self._grpc.stop(None)
            self._grpc = None
        if self._http is not None:
            await self._http.cleanup()
            self._http = None

    def _next_failure(self, signal: str) -> Failure | None:
        self.attempts[signal] += 1
        queue = self.failures[signal]
        return queue.pop(0) if queue else None

    def _http_handler(self, signal: str) -> Any:
        async def handle(request: web.Request) -> web.Response:
            # aiohttp inflates a gzip body itself; the header says how it travelled.
            body = await request.read()
            encoding = request.headers.get("Content-Encoding", "")
            failure = self._next_failure(signal)
            if failure is not None and not failure.rejected:
                headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
                status = status_pb2.Status(code=14, message="scripted failure")
                return web.Response(
                    status=failure.http_status,
                    body=status.SerializeToString(),
                    headers=headers,
                    content_type="application/x-protobuf",
                )
            parsed = REQUESTS[signal]()
            parsed.ParseFromString(body)
            self.received.append(Received(signal, parsed, dict(request.headers), encoding))
            return web.Response(
                body=_response(signal, failure).SerializeToString(),
                content_type="application/x-protobuf",
            )

        return handle


def _response(signal: str, failure: Failure | None) -> Message:
    response = RESPONSES[signal]()
    if failure is not None and failure.rejected:
        partial = response.partial_success  # type: ignore[attr-defined]
        setattr(partial, REJECTED_FIELD[signal], failure.rejected)
        partial.error_message = "scripted partial rejection"
    return response


class _Servicer:
    """One servicer class serves all three services: they share the `Export` signature."""

    def __init__(self, receiver: TestReceiver, signal: str) -> None:
        self.receiver = receiver
        self.signal = signal

    async def Export(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        failure = self.receiver._next_failure(self.signal)
        if failure is not None and not failure.rejected:
            trailers: tuple[tuple[str, bytes], ...] = ()
            if failure.retry_delay is not None:
                detail = any_pb2.Any()
                seconds = int(failure.retry_delay)
                detail.Pack(
                    error_details_pb2.RetryInfo(
                        retry_delay=duration_pb2.Duration(
                            seconds=seconds, nanos=int((failure.retry_delay - seconds) * 1e9)
                        )
                    )
                )
                status = status_pb2.Status(
                    code=failure.grpc_code.value[0], message="scripted failure", details=[detail]
                )
                trailers = (("grpc-status-details-bin", status.SerializeToString()),)
            await context.abort(failure.grpc_code, "scripted failure", trailing_metadata=trailers)
        metadata = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        self.receiver.received.append(Received(self.signal, request, metadata))
        return _response(self.signal, failure)
