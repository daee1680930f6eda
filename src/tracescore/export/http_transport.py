"""OTLP/HTTP exports with binary protobuf bodies over aiohttp's client: one ClientSession per
destination, its connections kept alive.

A hand-written HTTP/1.1 client spent 0.4-0.7x aiohttp's CPU per request (0.3 against 0.46 us per
span in 320 KB requests), a small share of the service's CPU per span, and stopped delivering
under uvloop; bench/export_hop.py measures the exporter as a whole.

Retryable (OTLP spec, "Failures"): HTTP 429, 502, 503 and 504 (honouring Retry-After), and
connection errors or timeouts; 404, 405 and 501 mean the backend does not serve the signal;
everything else is permanent. A failed attempt's `cause` names the trouble in a person's words:
DNS lookup failed, connection refused, TLS handshake failed, timed out, HTTP 503.
"""

from __future__ import annotations

import asyncio
import gzip
import ssl

import aiohttp

# googleapis-common-protos ships .pyi stubs but no py.typed marker.
from google.rpc import status_pb2  # type: ignore[import-untyped]

from tracescore.config.serve import SIGNALS, ExporterSettings
from tracescore.export.attempt import RESPONSES, Attempt, partial_success
from tracescore.retry import parse_retry_after

__all__ = ["HttpTransport"]

_HTTP_RETRYABLE = {429, 502, 503, 504}
_HTTP_UNSUPPORTED = {404, 405, 501}
"""Statuses of a server that has no such path: a traces-only backend's answer to /v1/logs."""

_PROTOBUF = "application/x-protobuf"
_INLINE_GZIP_LIMIT = 64 * 1024


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
            response = RESPONSES[signal]()
            try:
                response.ParseFromString(payload)
            except Exception:  # a body we cannot read still means success
                return Attempt(ok=True)
            return partial_success(signal, response)
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
