"""One OTLP export attempt over gRPC or HTTP/protobuf, classified as the OTLP spec says.

Requests travel as serialized bytes end to end: the gRPC side calls the generated services'
method paths with an identity serializer, so a request the receiver forwards untouched is never
parsed or copied again (reference/performance.md: message copies are the second-largest cost).

OTLP/HTTP goes over aiohttp's client: one ClientSession per destination, its connections kept
alive. (A hand-written HTTP/1.1 client spent 0.4-0.7x aiohttp's CPU per request, well under 1% of
the service's CPU per span, and stopped delivering under uvloop; bench/export_hop.py compares.)

Retryable (OTLP spec, "Failures"): gRPC CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE,
UNAVAILABLE, DATA_LOSS, and RESOURCE_EXHAUSTED only when the server sent RetryInfo; HTTP 429,
502, 503 and 504 (honouring Retry-After), and connection errors or timeouts. Everything else is
permanent. A backend that does not serve a signal at all (HTTP 404, 405 or 501, gRPC
UNIMPLEMENTED) is told apart (`Attempt.unsupported`): the exporter stops sending it that signal.

Each failed attempt carries its `cause` in words a person can act on (DNS lookup failed,
connection refused, TLS handshake failed, HTTP 503, timed out), which is what the exporter logs
and what /readyz reports.
"""

from __future__ import annotations

import asyncio
import gzip
import ssl
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp
import grpc
import grpc.aio
from google.protobuf.message import Message

# googleapis-common-protos ships .pyi stubs but no py.typed marker.
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as logs_svc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics_svc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace_svc

from tracescore.config.serve import SIGNALS, ExporterSettings
from tracescore.retry import parse_retry_after

__all__ = [
    "SIGNALS",
    "Attempt",
    "Transport",
    "make_transport",
    "retry_info_delay",
]

_RESPONSES: dict[str, type[Message]] = {
    "traces": trace_svc.ExportTraceServiceResponse,
    "logs": logs_svc.ExportLogsServiceResponse,
    "metrics": metrics_svc.ExportMetricsServiceResponse,
}
_REJECTED_FIELD = {
    "traces": "rejected_spans",
    "logs": "rejected_log_records",
    "metrics": "rejected_data_points",
}
_SERVICES = {
    "traces": trace_svc.DESCRIPTOR.services_by_name["TraceService"],
    "logs": logs_svc.DESCRIPTOR.services_by_name["LogsService"],
    "metrics": metrics_svc.DESCRIPTOR.services_by_name["MetricsService"],
}
_GRPC_RETRYABLE = {
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DATA_LOSS,
}
_HTTP_RETRYABLE = {429, 502, 503, 504}
_HTTP_UNSUPPORTED = {404, 405, 501}
"""Statuses of a server that has no such path: a traces-only backend's answer to /v1/logs."""
_PROTOBUF = "application/x-protobuf"
_INLINE_GZIP_LIMIT = 64 * 1024


@dataclass(frozen=True, slots=True)
class Attempt:
    """The outcome of one export attempt."""

    ok: bool
    retryable: bool = False
    reason: str = ""
    """Low-cardinality failure class for metrics: `unavailable`, `http_503`, `connection`..."""
    delay: float | None = None
    """Server-requested wait before retrying (Retry-After, RetryInfo), in seconds."""
    rejected: int = 0
    """Items the server refused in a partial success."""
    message: str = ""
    cause: str = ""
    """Why it failed, for a person: `DNS lookup failed`, `connection refused`, `HTTP 503`..."""
    unsupported: bool = False
    """The server does not serve this signal at all (HTTP 404/405/501, gRPC UNIMPLEMENTED)."""


class Transport(Protocol):
    """Sends one serialized request of a signal; never raises for transport failures."""

    async def start(self) -> None: ...

    async def prepare(self, body: bytes) -> bytes:
        """The body as it goes on the wire (compressed once, however often it is retried)."""
        ...

    async def send(self, signal: str, body: bytes) -> Attempt: ...

    async def close(self) -> None: ...


def make_transport(settings: ExporterSettings) -> Transport:
    """The transport named by `settings.protocol`."""
    if settings.protocol == "grpc":
        return GrpcTransport(settings)
    return HttpTransport(settings)


def _partial(signal: str, response: Message) -> Attempt:
    partial = getattr(response, "partial_success", None)
    if partial is None:
        return Attempt(ok=True)
    rejected = int(getattr(partial, _REJECTED_FIELD[signal], 0))
    return Attempt(ok=True, rejected=rejected, message=str(partial.error_message))


class GrpcTransport:
    """OTLP/gRPC: one channel, the three collector services' Export methods."""

    def __init__(self, settings: ExporterSettings) -> None:
        self._settings = settings
        parts = urlsplit(settings.endpoint)
        self._target = f"{parts.hostname}:{parts.port or 4317}"
        self._secure = parts.scheme == "https"
        self._metadata = tuple((k.lower(), v) for k, v in settings.headers.items())
        self._channel: grpc.aio.Channel | None = None
        self._calls: dict[str, Any] = {}

    async def start(self) -> None:
        compression = grpc.Compression.Gzip if self._settings.compression == "gzip" else None
        retry = self._settings.retry
        # The channel's own reconnect backoff (default up to 120 s) would otherwise keep a
        # recovered downstream unused long after our retry policy wants to try again.
        options = [
            ("grpc.initial_reconnect_backoff_ms", max(100, int(retry.initial_interval * 1000))),
            ("grpc.max_reconnect_backoff_ms", max(100, int(retry.max_interval * 1000))),
        ]
        if self._secure:
            self._channel = grpc.aio.secure_channel(
                self._target,
                _grpc_credentials(self._settings),
                options=options,
                compression=compression,
            )
        else:
            self._channel = grpc.aio.insecure_channel(
                self._target, options=options, compression=compression
            )
        for signal, service in _SERVICES.items():
            # No request_serializer: the request already is bytes.
            self._calls[signal] = self._channel.unary_unary(
                f"/{service.full_name}/Export",
                request_serializer=None,
                response_deserializer=_RESPONSES[signal].FromString,
            )

    async def prepare(self, body: bytes) -> bytes:
        return body  # grpc compresses in its C core, off the event loop

    async def send(self, signal: str, body: bytes) -> Attempt:
        try:
            response = await self._calls[signal](
                body, timeout=self._settings.timeout, metadata=self._metadata
            )
        except grpc.aio.AioRpcError as exc:
            return _grpc_failure(exc)
        return _partial(signal, response)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close(grace=None)


def _grpc_credentials(settings: ExporterSettings) -> grpc.ChannelCredentials:
    tls = settings.tls

    def read(path: str | None) -> bytes | None:
        if path is None:
            return None
        with open(path, "rb") as fh:
            return fh.read()

    return grpc.ssl_channel_credentials(
        root_certificates=read(tls.ca_file) if tls else None,
        private_key=read(tls.key_file) if tls else None,
        certificate_chain=read(tls.cert_file) if tls else None,
    )


def _grpc_failure(exc: grpc.aio.AioRpcError) -> Attempt:
    code = exc.code()
    reason = code.name.lower() if code is not None else "unknown"
    details = exc.details() or ""
    message = f"grpc {reason}: {details}".strip()
    cause = _grpc_cause(code, details)
    if code in _GRPC_RETRYABLE:
        return Attempt(ok=False, retryable=True, reason=reason, message=message, cause=cause)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        delay = retry_info_delay(exc.trailing_metadata())
        # Without RetryInfo the server says the request can never fit: permanent.
        return Attempt(
            ok=False,
            retryable=delay is not None,
            reason=reason,
            delay=delay,
            message=message,
            cause=cause,
        )
    unsupported = code == grpc.StatusCode.UNIMPLEMENTED
    return Attempt(ok=False, reason=reason, message=message, cause=cause, unsupported=unsupported)


def _grpc_cause(code: grpc.StatusCode | None, details: str) -> str:
    """What gRPC's status says in a person's words: its C core puts the connection's trouble
    (resolver, socket, handshake) in the details of UNAVAILABLE."""
    text = details.lower()
    if code == grpc.StatusCode.UNAVAILABLE:
        if any(word in text for word in ("dns", "resolv", "lookup", "name or service")):
            return "DNS lookup failed"
        if "connection refused" in text or "connect failed" in text:
            return "connection refused"
        if "ssl" in text or "tls" in text or "handshake" in text or "certificate" in text:
            return "TLS handshake failed"
        return "unavailable"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return "timed out"
    name = code.name if code is not None else "UNKNOWN"
    return f"gRPC {name}"


def retry_info_delay(metadata: Any) -> float | None:
    """Seconds to wait from the RetryInfo in a gRPC error's `grpc-status-details-bin` trailer,
    or None when it carries none."""
    for key, value in metadata or ():
        if key != "grpc-status-details-bin" or not isinstance(value, bytes):
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except Exception:  # a malformed trailer is no RetryInfo
            return None
        for detail in status.details:
            info = error_details_pb2.RetryInfo()
            if detail.Unpack(info):
                return float(info.retry_delay.seconds + info.retry_delay.nanos / 1e9)
    return None


class HttpTransport:
    """OTLP/HTTP with binary protobuf bodies: POST <endpoint>/v1/{traces,logs,metrics}."""

    def __init__(self, settings: ExporterSettings, connections: int = 4) -> None:
        """Args:
        settings: endpoint, headers, TLS, compression, timeout.
        connections: kept-alive connections at most (one per sender of the exporter).
        """
        self._settings = settings
        base = settings.endpoint.rstrip("/")
        self._urls = {signal: f"{base}/v1/{signal}" for signal in SIGNALS}
        self._headers = {**settings.headers, "Content-Type": _PROTOBUF}
        if settings.compression == "gzip":
            self._headers["Content-Encoding"] = "gzip"
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        context: ssl.SSLContext | bool = True
        tls = self._settings.tls
        if tls is not None:
            context = ssl.create_default_context(cafile=tls.ca_file)
            if tls.cert_file:
                context.load_cert_chain(tls.cert_file, tls.key_file)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=self._connections, ssl=context),
            headers=self._headers,
            timeout=aiohttp.ClientTimeout(total=self._settings.timeout),
            # The body goes as given (gzip is ours, done once however often it is retried).
            skip_auto_headers=("Content-Type",),
        )

    async def prepare(self, body: bytes) -> bytes:
        if self._settings.compression != "gzip":
            return body
        if len(body) < _INLINE_GZIP_LIMIT:
            return gzip.compress(body, compresslevel=6)
        # zlib releases the GIL: a large body compresses in a thread, not on the event loop.
        return await asyncio.to_thread(gzip.compress, body, 6)

    async def send(self, signal: str, body: bytes) -> Attempt:
        assert self._session is not None, "send() before start()"
        try:
            async with self._session.post(self._urls[signal], data=body) as reply:
                payload = await reply.read()
                status, retry_after = reply.status, reply.headers.get("Retry-After")
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            return _connection_failure(exc)
        if status == 200:
            response = _RESPONSES[signal]()
            try:
                response.ParseFromString(payload)
            except Exception:  # a body we cannot read still means success
                return Attempt(ok=True)
            return _partial(signal, response)
        return _http_failure(status, retry_after, payload)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def _connection_failure(exc: BaseException) -> Attempt:
    """A request that got no HTTP answer: retryable, with its cause in words."""
    if isinstance(exc, TimeoutError):
        reason, cause = "timeout", "timed out"
    elif isinstance(exc, aiohttp.ClientConnectorDNSError):
        reason, cause = "dns", "DNS lookup failed"
    elif isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        reason, cause = "tls", "TLS handshake failed"
    elif isinstance(exc, aiohttp.ClientConnectorError) and isinstance(
        exc.os_error, ConnectionRefusedError
    ):
        reason, cause = "refused", "connection refused"
    else:
        reason, cause = "connection", "connection failed"
    message = f"{type(exc).__name__}: {exc}"
    return Attempt(ok=False, retryable=True, reason=reason, message=message, cause=cause)


def _http_failure(status: int, retry_after: str | None, payload: bytes) -> Attempt:
    # OTLP/HTTP error bodies are a google.rpc.Status; fall back to the raw text.
    detail = payload[:200].decode("utf-8", "replace")
    parsed = status_pb2.Status()
    try:
        parsed.ParseFromString(payload)
        if parsed.message:
            detail = parsed.message
    except Exception:
        pass
    return Attempt(
        ok=False,
        retryable=status in _HTTP_RETRYABLE,
        reason=f"http_{status}",
        delay=parse_retry_after(retry_after),
        message=f"http {status}: {detail}",
        cause=f"HTTP {status}",
        unsupported=status in _HTTP_UNSUPPORTED,
    )
