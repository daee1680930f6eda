"""OTLP/gRPC receiver (grpc.aio): TraceService/Export.

The method is registered without a deserializer, so the handler gets the request bytes: they
are checked against the OTLP schema here (not parsed into a message) and forwarded untouched.
Status codes follow the OTLP spec: INVALID_ARGUMENT for a malformed request,
RESOURCE_EXHAUSTED for one over the size limit (gRPC enforces `max_receive_message_length`
itself), UNAUTHENTICATED without the token, UNAVAILABLE with a RetryInfo when the buffer or the
export queue is full, and partial_success with the rejected span count and a message otherwise.
"""

from __future__ import annotations

import logging

import grpc

from tracescore.config.serve import GrpcReceiver as GrpcReceiverSettings
from tracescore.config.serve import split_endpoint
from tracescore.errors import InputError, OverloadedError
from tracescore.receiver import _status
from tracescore.receiver._common import (
    TraceConsumer,
    bearer_ok,
    check_and_consume,
    committed,
    retry_delay,
    success_response,
)

__all__ = ["SERVICE_NAME", "GrpcReceiver"]

log = logging.getLogger(__name__)

SERVICE_NAME = "opentelemetry.proto.collector.trace.v1.TraceService"
# Trailing metadata read by OTLP clients: the Python SDK reads `google.rpc.retryinfo-bin`,
# gRPC status-aware clients (the collector's exporter) read `grpc-status-details-bin`.
_RETRY_INFO_KEY = "google.rpc.retryinfo-bin"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"


class GrpcReceiver:
    """Serves OTLP/gRPC on one endpoint; `start()` binds, `shutdown()` stops (both safe)."""

    def __init__(
        self,
        settings: GrpcReceiverSettings,
        consumer: TraceConsumer,
        *,
        token: str | None = None,
        drain_timeout: float = 5.0,
    ) -> None:
        """Configure; nothing is bound until `start()`.

        Args:
            settings: endpoint, message size limit, TLS and auth settings.
            consumer: where parsed requests go.
            token: the bearer token requests must carry (None: no authentication).
            drain_timeout: at shutdown, how long calls in flight may take to finish.
        """
        self.settings = settings
        self._consumer = consumer
        self._token = token
        self._drain_timeout = drain_timeout
        self._server: grpc.aio.Server | None = None
        self.port: int | None = None

    async def start(self) -> int:
        """Bind and serve; returns the bound port (useful with port 0)."""
        limit = self.settings.max_body_size
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", limit),
                ("grpc.max_send_message_length", 4 * 1024 * 1024),
                # Two services must not share a port silently.
                ("grpc.so_reuseport", 0),
            ]
        )
        handler = grpc.method_handlers_generic_handler(
            SERVICE_NAME, {"Export": grpc.unary_unary_rpc_method_handler(self._export)}
        )
        server.add_generic_rpc_handlers((handler,))
        host, port = split_endpoint(self.settings.endpoint)
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            bound = self._bind(server, address)
        except RuntimeError as exc:  # grpc reports a port in use as a bare RuntimeError
            raise OSError(f"otlp/grpc cannot listen on {address}: {exc}") from None
        await server.start()
        self._server = server
        self.port = bound
        return bound

    def _bind(self, server: grpc.aio.Server, address: str) -> int:
        tls = self.settings.tls
        if tls is None:
            bound = server.add_insecure_port(address)
        else:
            with open(tls.key_file, "rb") as key, open(tls.cert_file, "rb") as cert:
                pair = (key.read(), cert.read())
            client_ca = None
            if tls.client_ca_file:
                with open(tls.client_ca_file, "rb") as ca:
                    client_ca = ca.read()
            credentials = grpc.ssl_server_credentials(
                [pair], root_certificates=client_ca, require_client_auth=client_ca is not None
            )
            bound = server.add_secure_port(address, credentials)
        return bound

    async def shutdown(self) -> None:
        """Stop accepting and let calls in flight finish; safe without start, safe twice."""
        server, self._server = self._server, None
        if server is not None:
            await server.stop(self._drain_timeout)

    async def _export(self, body: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        header = None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization":
                header = value
                break
        if not bearer_ok(header if isinstance(header, str) else None, self._token):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong token")
        try:
            self._consumer.check_capacity()
            result = await check_and_consume(self._consumer, body)
            await committed(result)
        except OverloadedError as exc:
            seconds = retry_delay(exc)
            details = _status.status_proto(_status.UNAVAILABLE, f"overloaded: {exc}", seconds)
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                f"overloaded: {exc}",
                trailing_metadata=(
                    (_RETRY_INFO_KEY, _status.retry_info(seconds)),
                    (_STATUS_DETAILS_KEY, details),
                ),
            )
        except InputError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except Exception:  # a bug must cost one request, not the service
            log.exception("otlp/grpc: failed to process a request")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error; see service logs")
        return success_response(result).SerializeToString()
