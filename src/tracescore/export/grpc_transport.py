"""OTLP/gRPC exports: one grpcio channel, the three collector services' Export methods, called
with the request's bytes as they are.

Calls are made with grpcio's threaded API and their completion handed to the event loop in one
callback, not with grpc.aio: a grpc.aio call takes several loop iterations, and the service's
loop also scores runs in slices of a few milliseconds, so under load exports lagged, the export
queue filled and requests were refused with CPU to spare (the same cause as grpc.aio's server:
see `bench/loop_turns.py` and docs/performance.md).

Requests travel as serialized bytes end to end: the generated services' method paths are called
with an identity serializer, so a request the receiver forwards untouched is never parsed or
copied again (reference/performance.md: message copies are the second-largest cost).

Retryable (OTLP spec, "Failures"): CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE,
UNAVAILABLE, DATA_LOSS, and RESOURCE_EXHAUSTED only when the server sent RetryInfo; UNIMPLEMENTED
means the backend does not serve the signal; everything else is permanent.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import urlsplit

import grpc

# googleapis-common-protos ships .pyi stubs but no py.typed marker.
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as logs_svc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics_svc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace_svc

from tracescore.config.serve import ClientTlsSettings, ExporterSettings
from tracescore.export.attempt import RESPONSES, Attempt, partial_success

__all__ = ["GrpcTransport", "grpc_credentials", "retry_info_delay"]

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


class GrpcTransport:
    """OTLP/gRPC: one channel, the three collector services' Export methods."""

    def __init__(self, settings: ExporterSettings) -> None:
        self._settings = settings
        parts = urlsplit(settings.endpoint)
        self._target = f"{parts.hostname}:{parts.port or 4317}"
        self._secure = parts.scheme == "https"
        self._metadata = tuple((k.lower(), v) for k, v in settings.headers.items())
        self._channel: grpc.Channel | None = None
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
            self._channel = grpc.secure_channel(
                self._target,
                grpc_credentials(self._settings.tls),
                options=options,
                compression=compression,
            )
        else:
            self._channel = grpc.insecure_channel(
                self._target, options=options, compression=compression
            )
        for signal, service in _SERVICES.items():
            # No request_serializer: the request already is bytes.
            self._calls[signal] = self._channel.unary_unary(
                f"/{service.full_name}/Export",
                request_serializer=None,
                response_deserializer=RESPONSES[signal].FromString,
            )

    async def prepare(self, body: bytes) -> bytes:
        return body  # grpc compresses in its C core, off the event loop

    async def send(self, signal: str, body: bytes) -> Attempt:
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        call = self._calls[signal].future(
            body, timeout=self._settings.timeout, metadata=self._metadata
        )

        def on_done(_: object) -> None:  # on a grpcio thread (or here, if already done)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_settle, finished)

        call.add_done_callback(on_done)
        try:
            await finished
        except asyncio.CancelledError:
            call.cancel()
            raise
        try:
            response = call.result()
        except grpc.RpcError as exc:
            return _grpc_failure(exc)
        return partial_success(signal, response)

    async def close(self) -> None:
        if self._channel is not None:
            self._channel.close()


def _settle(finished: asyncio.Future[None]) -> None:
    if not finished.done():
        finished.set_result(None)


def grpc_credentials(tls: ClientTlsSettings | None) -> grpc.ChannelCredentials:
    """TLS credentials of a gRPC channel (the system's roots when `tls` names no CA); the
    trace and log exporter's and the metrics push's."""

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


def _grpc_failure(exc: Any) -> Attempt:
    """The attempt a failed call was (`exc`: grpcio's RpcError, which is also its Call)."""
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
