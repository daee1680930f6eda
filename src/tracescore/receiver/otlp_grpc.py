"""OTLP/gRPC receiver: TraceService/Export on grpcio's threaded server.

The method is registered without a deserializer, so the handler gets the request bytes: they
are checked against the OTLP schema (not parsed into a message) and forwarded untouched.
Status codes follow the OTLP spec: INVALID_ARGUMENT for a malformed request,
RESOURCE_EXHAUSTED for one over the size limit (gRPC enforces `max_receive_message_length`
itself), UNAUTHENTICATED without the token, UNAVAILABLE with a RetryInfo when the buffer or the
export queue is full, and partial_success with the rejected span count and a message otherwise.

Why threads and not grpc.aio: a grpc.aio server accepts one call at a time, each accept a few
event-loop iterations after the last, and the service's loop also scores runs in slices of a few
milliseconds. Beside 5 ms slices a grpc.aio server answered 46 calls/s, the threaded server
733-928 (`bench/loop_turns.py`), so under load calls queued in grpc.aio and p99 latency, not CPU,
set the gRPC capacity. Here grpcio's own threads accept calls; a handler thread hands the body to
the event loop (everything the pipeline holds stays on the loop) and waits for its answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Coroutine
from typing import Any

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

__all__ = ["HANDLER_THREADS", "SERVICE_NAME", "GrpcReceiver"]

log = logging.getLogger(__name__)

SERVICE_NAME = "opentelemetry.proto.collector.trace.v1.TraceService"
# Trailing metadata read by OTLP clients: the Python SDK reads `google.rpc.retryinfo-bin`,
# gRPC status-aware clients (the collector's exporter) read `grpc-status-details-bin`.
_RETRY_INFO_KEY = "google.rpc.retryinfo-bin"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"
# Calls handled at once; more wait in grpcio's queue. A handler mostly waits for the loop, so
# this bounds calls in flight, not CPU: the collector's exporter sends 10 at a time by default.
HANDLER_THREADS = 32
# How often a handler waiting for the loop checks that the receiver still runs.
_WAIT_POLL_S = 1.0


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
            consumer: where checked requests go (on the event loop that calls `start()`).
            token: the bearer token requests must carry (None: no authentication).
            drain_timeout: at shutdown, how long calls in flight may take to finish.
        """
        self.settings = settings
        self._consumer = consumer
        self._token = token
        self._drain_timeout = drain_timeout
        self._server: grpc.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.port: int | None = None

    async def start(self) -> int:
        """Bind and serve; returns the bound port (useful with port 0)."""
        limit = self.settings.max_body_size
        server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(HANDLER_THREADS, thread_name_prefix="otlp-grpc"),
            options=[
                ("grpc.max_receive_message_length", limit),
                ("grpc.max_send_message_length", 4 * 1024 * 1024),
                # Two services must not share a port silently.
                ("grpc.so_reuseport", 0),
            ],
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
        self._loop = asyncio.get_running_loop()
        server.start()
        self._server = server
        self.port = bound
        return bound

    def _bind(self, server: grpc.Server, address: str) -> int:
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
        """Stop accepting and let calls in flight finish; safe without start, safe twice.

        The loop keeps running meanwhile: the calls in flight wait on it."""
        server, self._server = self._server, None
        if server is not None:
            stopped = server.stop(self._drain_timeout)
            await asyncio.to_thread(stopped.wait)

    def _export(self, body: bytes, context: grpc.ServicerContext) -> bytes:
        """On a grpcio thread: the answer to one call, its work done on the event loop."""
        header = None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization":
                header = value
                break
        if not bearer_ok(header if isinstance(header, str) else None, self._token):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong token")
        try:
            return self._on_loop(self._take(body, context))
        except OverloadedError as exc:
            seconds = retry_delay(exc)
            details = _status.status_proto(_status.UNAVAILABLE, f"overloaded: {exc}", seconds)
            context.set_trailing_metadata(
                ((_RETRY_INFO_KEY, _status.retry_info(seconds)), (_STATUS_DETAILS_KEY, details))
            )
            context.abort(grpc.StatusCode.UNAVAILABLE, f"overloaded: {exc}")
        except InputError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except _Stopped:
            context.abort(grpc.StatusCode.UNAVAILABLE, "the service is shutting down")
        except _Abandoned:  # nobody reads this answer; the sender counts its own timeout
            context.abort(grpc.StatusCode.CANCELLED, "the sender gave up before it was taken")
        except Exception:  # a bug must cost one request, not the service
            log.exception("otlp/grpc: failed to process a request")
            context.abort(grpc.StatusCode.INTERNAL, "internal error; see service logs")
        raise AssertionError("context.abort raises")  # pragma: no cover

    async def _take(self, body: bytes, context: grpc.ServicerContext) -> bytes:
        """The request's work, on the event loop: answered once taken (and on disk)."""
        if not context.is_active():
            # The sender's deadline passed (or it cancelled) while the call waited for a busy
            # loop: it will send these spans again, so taking them now would forward them
            # twice, at the cost of scoring them for nobody.
            raise _Abandoned
        self._consumer.check_capacity()
        result = await check_and_consume(self._consumer, body)
        await committed(result)
        return success_response(result).SerializeToString()

    def _on_loop(self, work: Coroutine[Any, Any, bytes]) -> bytes:
        """`work`'s result, run on the service's loop; _Stopped if the loop went away first."""
        loop = self._loop
        if loop is None or loop.is_closed():
            work.close()  # never awaited: not a warning
            raise _Stopped
        try:
            future = asyncio.run_coroutine_threadsafe(work, loop)
        except RuntimeError:  # the loop closed in between
            work.close()  # never awaited: not a warning
            raise _Stopped from None
        while True:
            try:
                return future.result(_WAIT_POLL_S)
            except concurrent.futures.TimeoutError:
                if loop.is_closed():  # never answered: the sender keeps the data
                    future.cancel()
                    raise _Stopped from None


class _Stopped(Exception):
    """The event loop stopped before a call's work was done."""


class _Abandoned(Exception):
    """The sender gave up on a call before the loop got to it."""
