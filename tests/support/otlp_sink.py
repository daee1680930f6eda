"""A real OTLP receiver for tests: catches traces, logs and metrics over gRPC or HTTP.

It runs its own event loop in a background thread, so a test can start `tracescore serve`
as a subprocess, point its exporter here and look at exactly what came out::

    with OtlpSink("grpc") as sink:
        ...  # config exporter.endpoint = sink.endpoint
        sink.wait_for(lambda: len(sink.spans()) == 20)

`stop()` then `start()` again on the same port takes the "downstream" down and back, and
`refuse(503)` answers every request with a retryable failure while still listening.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import grpc
from aiohttp import web
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span

__all__ = ["OtlpSink", "SinkSpan", "attrs", "free_port"]

_SERVICES = {
    "traces": (
        "opentelemetry.proto.collector.trace.v1.TraceService",
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    ),
    "logs": (
        "opentelemetry.proto.collector.logs.v1.LogsService",
        ExportLogsServiceRequest,
        ExportLogsServiceResponse,
    ),
    "metrics": (
        "opentelemetry.proto.collector.metrics.v1.MetricsService",
        ExportMetricsServiceRequest,
        ExportMetricsServiceResponse,
    ),
}


def free_port() -> int:
    """A port nothing listens on right now (for a sink that must come back on the same one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _value(v: AnyValue) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, which) if which else None


def attrs(kvs: Any) -> dict[str, Any]:
    """KeyValues as a dict (duplicate keys would collide: tests check uniqueness apart)."""
    return {kv.key: _value(kv.value) for kv in kvs}


@dataclass(frozen=True)
class SinkSpan:
    """One received span with its resource attributes and scope name."""

    resource: dict[str, Any]
    scope: str
    span: Span

    @property
    def attributes(self) -> dict[str, Any]:
        """The span's attributes as a dict."""
        return attrs(self.span.attributes)


class OtlpSink:
    """An OTLP gRPC or HTTP receiver in a background thread, recording every request."""

    def __init__(
        self,
        protocol: Literal["grpc", "http"] = "http",
        port: int | None = None,
        signals: tuple[str, ...] = ("traces", "logs", "metrics"),
    ) -> None:
        """Configure; `port` None picks a free one (kept across stop/start). Only `signals`
        are served, as a traces-only backend does: the others get HTTP 404 (no such path) or
        gRPC UNIMPLEMENTED (no such service)."""
        self.protocol = protocol
        self.signals = signals
        self.port = port or free_port()
        self._lock = threading.Lock()
        self._requests: dict[str, list[Any]] = {"traces": [], "logs": [], "metrics": []}
        self._refuse: int | None = None
        self.refused = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    @property
    def endpoint(self) -> str:
        """The base URL an exporter points at."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> OtlpSink:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- control ---------------------------------------------------------------------------

    def start(self) -> None:
        """Listen (again) on `self.port`; returns once accepting."""
        ready = threading.Event()
        errors: list[BaseException] = []

        def main() -> None:
            try:
                asyncio.run(self._serve(ready))
            except BaseException as exc:  # surfaced to the caller of start()
                errors.append(exc)
                ready.set()

        self._thread = threading.Thread(target=main, name=f"otlp-sink-{self.port}", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]

    def stop(self) -> None:
        """Stop listening (connections refused until `start()`)."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)
        self._thread = None
        self._loop = None

    def refuse(self, status: int | None) -> None:
        """Answer every request with this HTTP status (gRPC: UNAVAILABLE); None accepts."""
        self._refuse = status

    # -- what arrived ----------------------------------------------------------------------

    def requests(self, signal: str) -> list[Any]:
        """Parsed requests of one signal (`traces`, `logs`, `metrics`), in arrival order."""
        with self._lock:
            return list(self._requests[signal])

    def spans(self) -> list[SinkSpan]:
        """Every received span."""
        return [
            SinkSpan(attrs(rs.resource.attributes), ss.scope.name, span)
            for req in self.requests("traces")
            for rs in req.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]

    def log_records(self) -> list[tuple[dict[str, Any], LogRecord]]:
        """Every received log record with its resource attributes."""
        return [
            (attrs(rl.resource.attributes), record)
            for req in self.requests("logs")
            for rl in req.resource_logs
            for sl in rl.scope_logs
            for record in sl.log_records
        ]

    def metric_names(self) -> set[str]:
        """Names of every metric received."""
        return {
            m.name
            for req in self.requests("metrics")
            for rm in req.resource_metrics
            for sm in rm.scope_metrics
            for m in sm.metrics
        }

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
        """Poll until `predicate()` holds; AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.02)
        assert predicate(), f"condition not met within {timeout}s"

    # -- servers ---------------------------------------------------------------------------

    def _record(self, signal: str, body: bytes) -> None:
        request = _SERVICES[signal][1]()
        request.ParseFromString(body)
        with self._lock:
            self._requests[signal].append(request)

    async def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self.protocol == "grpc":
            server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
            for signal, (service, _, response) in _SERVICES.items():
                if signal not in self.signals:
                    continue
                handler = grpc.unary_unary_rpc_method_handler(self._grpc_handler(signal, response))
                server.add_generic_rpc_handlers(
                    (grpc.method_handlers_generic_handler(service, {"Export": handler}),)
                )
            server.add_insecure_port(f"127.0.0.1:{self.port}")
            await server.start()
            ready.set()
            await self._stop.wait()
            await server.stop(0)
        else:
            app = web.Application(client_max_size=64 * 1024 * 1024)
            for signal in self.signals:
                app.router.add_post(f"/v1/{signal}", self._http_handler(signal))
            # The sink inflates bodies itself, so it sees exactly what the exporter sent.
            runner = web.AppRunner(app, access_log=None, auto_decompress=False)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
            ready.set()
            await self._stop.wait()
            await runner.cleanup()

    def _grpc_handler(self, signal: str, response: Any) -> Callable[..., Any]:
        empty = response().SerializeToString()

        async def export(body: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
            if self._refuse is not None:
                self.refused += 1
                await context.abort(grpc.StatusCode.UNAVAILABLE, "sink refusing")
            self._record(signal, body)
            return empty

        return export

    def _http_handler(self, signal: str) -> Callable[[web.Request], Any]:
        async def export(request: web.Request) -> web.Response:
            body = await request.read()
            if self._refuse is not None:
                self.refused += 1
                return web.Response(status=self._refuse, headers={"Retry-After": "0"})
            if request.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            self._record(signal, body)
            return web.Response(body=b"", content_type="application/x-protobuf")

        return export
