"""What both receivers share: the consumer they feed, auth, body limits and decoding."""

from __future__ import annotations

import asyncio
import hmac
import math
import ssl
import zlib
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tracescore.config.serve import ServerTlsSettings
from tracescore.errors import InputError, OverloadedError

__all__ = [
    "OFFLOAD_BYTES",
    "BodyTooLargeError",
    "ConsumeResult",
    "ServiceStatus",
    "TraceConsumer",
    "bearer_ok",
    "check_and_consume",
    "committed",
    "consume_parsed",
    "decompress",
    "partial_message",
    "retry_after_seconds",
    "retry_delay",
    "server_ssl_context",
    "success_response",
]

_BEARER = "bearer "


class ConsumeResult(Protocol):
    """What the consumer says about one request's spans."""

    @property
    def rejected(self) -> int: ...
    @property
    def problems(self) -> Sequence[str]: ...


class TraceConsumer(Protocol):
    """Where receivers hand requests (the assembler, through the pipeline)."""

    def check_capacity(self) -> None:
        """Raise OverloadedError when the request must be refused with a retryable status."""

    def consume(
        self, request: ExportTraceServiceRequest | None, body: bytes | None, scanned: Any = None
    ) -> ConsumeResult:
        """Take a request that arrived as protobuf by its checked bytes (request None: it is
        not parsed; scanned: what `scan` made of them, or None), or one that arrived as JSON
        parsed (body None)."""
        ...

    def checked_scan(self, body: bytes) -> Any:
        """Protobuf bytes checked against the OTLP schema and read for `consume`, in one walk
        where the scanner can vouch for them: InputError for what upb would not parse (naming
        what is wrong and where), before anything is taken. Touches nothing else: safe in a
        worker thread."""
        ...

    @property
    def consuming(self) -> bool:
        """A request is being taken in slices: `consume` must wait, through `consume_sliced`."""
        ...

    async def consume_sliced(
        self, request: ExportTraceServiceRequest | None, body: bytes | None, scanned: Any = None
    ) -> ConsumeResult:
        """`consume` in slices that yield to the event loop, after any request before it;
        once started it must run to its end (callers shield it from cancellation)."""
        ...


class ServiceStatus(Protocol):
    """What the HTTP receiver's health and metrics endpoints report."""

    def is_ready(self) -> bool:
        """True while the service accepts spans (started, not shutting down)."""
        ...

    def not_ready_reason(self) -> str | None:
        """Why the service is not ready (starting, shutting down, an exporter failing for too
        long), or None when it is."""
        ...

    def metrics_text(self) -> str:
        """The service's metrics in Prometheus text format."""
        ...


class BodyTooLargeError(InputError):
    """A request body over the receiver's limit, before or after decompression."""


async def committed(result: ConsumeResult) -> None:
    """Wait until the request is on disk when storage is on (the result's `committed`): a
    request is answered OK only once a crash can no longer lose it."""
    waiter: Awaitable[None] | None = getattr(result, "committed", None)
    if waiter is not None:
        await waiter


def bearer_ok(header: str | None, token: str | None) -> bool:
    """True when no token is configured, or `header` is `Bearer <token>` (constant time)."""
    if token is None:
        return True
    if not header or header[: len(_BEARER)].lower() != _BEARER:
        return False
    return hmac.compare_digest(header[len(_BEARER) :].strip().encode(), token.encode())


def decompress(body: bytes, encoding: str, limit: int) -> bytes:
    """Undo Content-Encoding gzip or deflate, refusing output beyond `limit` bytes.

    The output is capped while inflating, so a small body that would inflate to gigabytes (a
    gzip bomb) costs at most `limit` bytes of memory.
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding == "gzip":
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflater = zlib.decompressobj(wbits=zlib.MAX_WBITS)
    else:
        raise InputError(f"unsupported Content-Encoding {encoding!r}; use gzip or none")
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise InputError(f"body is not valid {encoding}: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise BodyTooLargeError(f"body inflates to more than {limit} bytes (max_body_size)")
    if not inflater.eof:
        raise InputError(f"body is truncated {encoding} data")
    return out


# Protobuf bodies from this size on are checked and scanned in a worker thread: a 26 MiB body
# of 512k one-span traces takes seconds to scan, and the event loop (health checks, other
# requests, scoring) must keep running meanwhile. The native checker and scanner release the
# GIL as they go (at most ~10 ms at a time). Smaller bodies are read inline: a thread hop costs
# more than their whole scan.
OFFLOAD_BYTES = 1 << 20


async def check_and_consume(consumer: TraceConsumer, body: bytes) -> ConsumeResult:
    """The schema check (`checked_scan`) and `consume` of a protobuf body, a large one read off
    the loop and taken in slices that let the loop answer other requests (and /healthz)
    meanwhile."""
    if len(body) < OFFLOAD_BYTES:
        scanned = consumer.checked_scan(body)  # refused here, before anything is taken
        if not consumer.consuming:
            return consumer.consume(None, body, scanned)
        return await _in_turn(consumer, None, body, scanned)
    scanned = await asyncio.to_thread(consumer.checked_scan, body)
    return await _in_turn(consumer, None, body, scanned, large=True)


async def consume_parsed(
    consumer: TraceConsumer, request: ExportTraceServiceRequest
) -> ConsumeResult:
    """`consume` of a request parsed from JSON, in turn after a request taken in slices."""
    if not consumer.consuming:
        return consumer.consume(request, None)
    return await _in_turn(consumer, request, None, None)


def _in_turn(
    consumer: TraceConsumer,
    request: ExportTraceServiceRequest | None,
    body: bytes | None,
    scanned: Any,
    large: bool = False,
) -> asyncio.Future[ConsumeResult]:
    """`consume_sliced` shielded: a cancelled handler (a client gone, shutdown) must not stop
    a request halfway through its bookkeeping; it runs to its end, answered or not. What a
    `large` request's scan did not keep is freed off the loop."""
    return asyncio.shield(_consume_and_release(consumer, request, body, scanned, large))


async def _consume_and_release(
    consumer: TraceConsumer,
    request: ExportTraceServiceRequest | None,
    body: bytes | None,
    scanned: Any,
    large: bool,
) -> ConsumeResult:
    try:
        return await consumer.consume_sliced(request, body, scanned)
    finally:
        if large:
            # What the request did not keep is freed in the worker thread, a group at a
            # time: freeing 512k records took a second.
            await asyncio.to_thread(_release, scanned)
            del scanned


def _release(scanned: Any) -> None:
    groups = scanned[0]
    while groups:
        groups.popitem()


def success_response(result: ConsumeResult) -> ExportTraceServiceResponse:
    """The Export response: partial_success set only when spans were rejected."""
    response = ExportTraceServiceResponse()
    if result.rejected:
        response.partial_success.rejected_spans = result.rejected
        response.partial_success.error_message = partial_message(result)
    return response


def partial_message(result: ConsumeResult) -> str:
    """`N span(s) rejected: <first problems>`."""
    shown = "; ".join(result.problems)
    more = "" if len(result.problems) >= result.rejected else " ..."
    return f"{result.rejected} span(s) rejected: {shown}{more}"


def retry_after_seconds(error: OverloadedError) -> int:
    """Whole seconds for an HTTP Retry-After header: rounded up, at least 1 (delay-seconds is
    an integer, and 0 makes the collector's exporter fall back to its own backoff)."""
    return max(1, math.ceil(error.retry_after_s))


def retry_delay(error: OverloadedError) -> float:
    """Seconds for a gRPC RetryInfo: fractions allowed, to the millisecond, at least 10 ms."""
    return max(0.01, round(error.retry_after_s, 3))


def server_ssl_context(tls: ServerTlsSettings) -> ssl.SSLContext:
    """An SSL context serving `tls.cert_file`; with a client CA, client certs are required."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tls.cert_file, tls.key_file)
    if tls.client_ca_file:
        context.load_verify_locations(tls.client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
    return context
