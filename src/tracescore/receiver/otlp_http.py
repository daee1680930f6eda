"""OTLP/HTTP receiver (aiohttp): POST /v1/traces, plus /healthz, /readyz and /metrics.

Follows the OTLP/HTTP spec (opentelemetry-proto docs/specification.md): protobuf and JSON bodies
on one path, answered in the request's own encoding; gzip request bodies; a body limit applied
again after decompression (413); a `google.rpc.Status` body naming what is wrong on every
failure (400, 401, 413, 415, 500); 503 with Retry-After when the buffer or the export queue is
full, so the sender keeps the data and retries.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Literal

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tracescore.config.serve import HttpReceiver as HttpReceiverSettings
from tracescore.config.serve import split_endpoint
from tracescore.errors import InputError, OverloadedError
from tracescore.otlp.json import parse_json_request
from tracescore.receiver import _status
from tracescore.receiver._common import (
    OFFLOAD_BYTES,
    BodyTooLargeError,
    ServiceStatus,
    TraceConsumer,
    bearer_ok,
    check_and_consume,
    committed,
    consume_parsed,
    decompress,
    retry_after_seconds,
    server_ssl_context,
    success_response,
)

__all__ = ["HttpReceiver"]

log = logging.getLogger(__name__)

TRACES_PATH = "/v1/traces"
_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_Encoding = Literal["protobuf", "json"]


async def _read_body(request: web.Request, limit: int) -> bytes | None:
    """The request's body, or None past `limit` bytes (what is left of it is not read).

    Its chunks joined once: `request.read()` grows a bytearray and copies it into bytes, two
    to three copies of every byte received (a few percent of serve's CPU for 320 KB bodies).
    """
    chunks: list[bytes] = []
    size = 0
    while chunk := await request.content.readany():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class HttpReceiver:
    """Serves OTLP/HTTP on one endpoint; `start()` binds, `shutdown()` stops (both safe)."""

    def __init__(
        self,
        settings: HttpReceiverSettings,
        consumer: TraceConsumer,
        status: ServiceStatus,
        *,
        token: str | None = None,
        drain_timeout: float = 5.0,
    ) -> None:
        """Configure; nothing is bound until `start()`.

        Args:
            settings: endpoint, body limit, TLS and auth settings.
            consumer: where decoded requests go.
            status: readiness and the metrics text.
            token: the bearer token requests must carry (None: no authentication).
            drain_timeout: at shutdown, how long requests in flight may take to finish.
        """
        self.settings = settings
        self._consumer = consumer
        self._status = status
        self._token = token
        self._drain_timeout = drain_timeout
        self._limit = settings.max_body_size
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> int:
        """Bind and serve; returns the bound port (useful with port 0)."""
        host, port = split_endpoint(self.settings.endpoint)
        # The limit is enforced in `_traces`, which answers 413 with an OTLP Status body;
        # aiohttp's own limit only guards against bodies beyond it.
        app = web.Application(client_max_size=self._limit + 1)
        app.router.add_post(TRACES_PATH, self._traces)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=self._drain_timeout,
            # Bodies are inflated in `decompress`, which caps the output: aiohttp's own
            # inflation would hand over a gzip bomb's output before any check could run.
            auto_decompress=False,
        )
        await runner.setup()
        self._runner = runner
        sock = _bind(host, port)
        ssl_context = server_ssl_context(self.settings.tls) if self.settings.tls else None
        await web.SockSite(runner, sock, ssl_context=ssl_context).start()
        self.port = int(sock.getsockname()[1])
        return self.port

    async def shutdown(self) -> None:
        """Stop accepting and finish requests in flight; safe without start, safe twice."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    # -- handlers --------------------------------------------------------------------------

    async def _traces(self, request: web.Request) -> web.Response:
        encoding = _encoding(request.content_type)
        if encoding is None:
            return _failure(
                415,
                "protobuf",
                _status.INVALID_ARGUMENT,
                f"unsupported Content-Type {request.content_type!r}; use {_PROTOBUF} or {_JSON}",
            )
        if not bearer_ok(request.headers.get("Authorization"), self._token):
            response = _failure(401, encoding, _status.UNAUTHENTICATED, "missing or wrong token")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        try:
            self._consumer.check_capacity()
        except OverloadedError as exc:
            return _overloaded(encoding, exc)
        length = request.content_length
        if length is not None and length > self._limit:
            return _too_large(encoding, f"body of {length} bytes exceeds {self._limit}")
        body = await _read_body(request, self._limit)
        if body is None:
            return _too_large(encoding, f"body exceeds {self._limit} bytes")
        try:
            body = decompress(body, request.headers.get("Content-Encoding", ""), self._limit)
            if encoding == "json":
                if len(body) < OFFLOAD_BYTES:
                    result = await consume_parsed(self._consumer, parse_json_request(body))
                else:  # as protobuf bodies are (check_and_consume): off the event loop
                    proto = await asyncio.to_thread(_json_to_protobuf, body)
                    result = await check_and_consume(self._consumer, proto)
            else:
                result = await check_and_consume(self._consumer, body)
            await committed(result)
        except BodyTooLargeError as exc:
            return _too_large(encoding, str(exc))
        except InputError as exc:
            return _failure(400, encoding, _status.INVALID_ARGUMENT, str(exc))
        except OverloadedError as exc:
            return _overloaded(encoding, exc)
        except Exception:  # a bug must cost one request, not the service
            log.exception("otlp/http: failed to process a request")
            return _failure(500, encoding, _status.INTERNAL, "internal error; see service logs")
        answer = success_response(result)
        if encoding == "json":
            return web.Response(body=_json_response(answer), content_type=_JSON)
        return web.Response(body=answer.SerializeToString(), content_type=_PROTOBUF)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        reason = self._status.not_ready_reason()
        if reason is None:
            return web.Response(text="ready\n")
        return web.Response(status=503, text=f"not ready: {reason}\n")

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(
            body=self._status.metrics_text().encode(),
            headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
        )


def _json_to_protobuf(body: bytes) -> bytes:
    """A JSON body as protobuf bytes (the assembler reads bytes), made in a worker thread."""
    return parse_json_request(body).SerializeToString()


def _encoding(content_type: str) -> _Encoding | None:
    if content_type == _PROTOBUF:
        return "protobuf"
    if content_type == _JSON:
        return "json"
    return None


def _json_response(response: ExportTraceServiceResponse) -> bytes:
    if not response.HasField("partial_success"):
        return b"{}"
    # OTLP/JSON: lowerCamelCase keys, int64 as a decimal string.
    partial = {
        "rejectedSpans": str(response.partial_success.rejected_spans),
        "errorMessage": response.partial_success.error_message,
    }
    return json.dumps({"partialSuccess": partial}).encode()


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket; binding here (not in aiohttp) tells the port picked for port 0."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=1024)


def _failure(
    http_status: int,
    encoding: _Encoding,
    code: int,
    message: str,
    retry_after_s: float | None = None,
) -> web.Response:
    if encoding == "json":
        body, content_type = _status.status_json(code, message), _JSON
    else:
        body, content_type = _status.status_proto(code, message, retry_after_s), _PROTOBUF
    return web.Response(status=http_status, body=body, content_type=content_type)


def _too_large(encoding: _Encoding, message: str) -> web.Response:
    return _failure(413, encoding, _status.RESOURCE_EXHAUSTED, f"{message} (max_body_size)")


def _overloaded(encoding: _Encoding, error: OverloadedError) -> web.Response:
    seconds = retry_after_seconds(error)
    response = _failure(503, encoding, _status.UNAVAILABLE, f"overloaded: {error}", seconds)
    response.headers["Retry-After"] = str(seconds)
    return response
