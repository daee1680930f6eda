"""A small HTTP/1.1 client for OTLP/HTTP exports: POST a body, read the status and the reply.

The exporter only ever sends one kind of request (a POST of a protobuf body to a fixed URL) and
reads one kind of answer (a status, `Retry-After` and a small body), and it forwards every span
the service receives, so the client's cost is paid per span. aiohttp's client spent 280-390 us
of CPU per 320 KB request against about 140 us for the same POST written straight to an asyncio
transport (bench: `.venv/bin/python bench/http_client.py`): its request and response objects,
its tracing hooks and a copy of every body joined to its headers. Here the headers of a URL are
encoded once, the body is written as it is, and the response parser reads what RFC 9112 allows a
server to send: `Content-Length`, `Transfer-Encoding: chunked` or a body ended by the close, and
`Content-Encoding: gzip`.

Connections are kept alive and reused, one request at a time each (no pipelining), and closed
on any error, timeout or `Connection: close`. A request is never resent here: a failed attempt
is the exporter's to retry, under its backoff and its count of failures.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from tracescore.config.serve import header_problem

__all__ = ["HttpClient", "HttpProtocolError", "HttpReply"]

_MAX_HEAD = 64 * 1024
_MAX_BODY = 4 * 1024 * 1024
"""Replies are statuses and small error messages; a larger one is not an OTLP endpoint's."""
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_MAX_IDLE = 16
"""Idle connections kept (the exporter's senders use one each)."""
KEEP_IDLE_S = 15.0
"""An idle connection older than this is closed rather than reused (aiohttp's default): a
server closing idle connections (the collector's after a minute) may do it just as a request is
sent on one, and that request would then fail."""


class HttpProtocolError(ConnectionError):
    """The server's reply is not HTTP/1.1 this client can read (a connection failure: the
    exporter retries it like one)."""


@dataclass(frozen=True, slots=True)
class HttpReply:
    """A response: its status, its headers (names lowercase; the last of repeated ones) and
    its body, decompressed."""

    status: int
    headers: dict[str, str]
    body: bytes


class HttpClient:
    """POSTs to one origin (scheme, host and port) over kept-alive connections."""

    def __init__(
        self, origin: str, headers: dict[str, str], ssl_context: ssl.SSLContext | None
    ) -> None:
        """Args:
        origin: `http://host[:port]` or `https://...`; a path is ignored (see `post`).
        headers: sent with every request, after Host and before Content-Length.
        ssl_context: for https (None: the system's defaults).
        """
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http:// or https:// URL, got {origin!r}")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self._ssl = ssl_context or ssl.create_default_context()
        host = f"[{self._host}]" if ":" in self._host else self._host
        lines = [("Host", host if parts.port is None else f"{host}:{parts.port}")]
        lines += headers.items()
        for name, value in lines:
            problem = header_problem(name, value)  # the rule the config checks headers by
            if problem is not None:
                raise ValueError(f"invalid HTTP header: {problem}")
        self._head = "".join(f"{name}: {value}\r\n" for name, value in lines).encode("latin-1")
        self._idle: list[_Connection] = []
        self._closed = False

    async def post(self, path: str, body: bytes, timeout: float) -> HttpReply:
        """POST `body` to `path`; the reply, whatever its status.

        Raises:
            TimeoutError: no complete reply within `timeout` seconds (connecting included).
            OSError: the connection could not be made or broke (HttpProtocolError: the reply
                could not be read).
        """
        request = b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n" % (
            path.encode("ascii"),
            self._head,
            len(body),
        )
        connection: _Connection | None = None
        try:
            async with asyncio.timeout(timeout):
                connection = await self._connection()
                reply = await connection.exchange(request, body)
        except BaseException:
            if connection is not None:
                connection.close()
            raise
        if connection.reusable and not self._closed and len(self._idle) < _MAX_IDLE:
            connection.idle_since = asyncio.get_running_loop().time()
            self._idle.append(connection)
        else:
            connection.close()
        return reply

    async def close(self) -> None:
        """Close every idle connection (those in use close when their request ends)."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    async def _connection(self) -> _Connection:
        loop = asyncio.get_running_loop()
        while self._idle:
            connection = self._idle.pop()
            # The server may have closed it while it was idle, or may be about to.
            if connection.reusable and loop.time() - connection.idle_since < KEEP_IDLE_S:
                return connection
            connection.close()
        _, connection = await loop.create_connection(
            _Connection,
            self._host,
            self._port,
            ssl=self._ssl,
            server_hostname=self._host if self._ssl is not None else None,
        )
        return connection


class _Connection(asyncio.Protocol):
    """One connection: writes a request, parses its reply as the bytes arrive."""

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._waiter: asyncio.Future[HttpReply] | None = None
        self._closed = False
        self.reusable = False
        self.idle_since = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self.reusable = True

    def exchange(self, request: bytes, body: bytes) -> asyncio.Future[HttpReply]:
        """Send a request (head, then body, without joining them); its reply."""
        transport = self._transport
        if transport is None or self._closed:
            raise ConnectionResetError("connection closed before the request")
        self.reusable = False  # until its reply has been read whole
        self._buffer.clear()
        self._waiter = asyncio.get_running_loop().create_future()
        transport.write(request)
        transport.write(body)
        return self._waiter

    def data_received(self, data: bytes) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            self.close()  # bytes nobody asked for: the connection is out of step
            return
        self._buffer += data
        try:
            parsed = _parse(self._buffer, ended=False)
        except HttpProtocolError as exc:
            waiter.set_exception(exc)
            self.close()
            return
        if parsed is not None:
            reply, keep, stop = parsed
            # Bytes after the reply were not asked for: the connection is out of step.
            self._finish(waiter, reply, keep and stop == len(self._buffer))

    def eof_received(self) -> bool | None:
        return False  # close the transport: a half-closed connection is not reused

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.reusable = False
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        try:
            reply = _parse(self._buffer, ended=True)
        except HttpProtocolError as error:
            waiter.set_exception(error)
            return
        if reply is None:
            waiter.set_exception(
                ConnectionResetError(f"connection closed before the reply was complete: {exc}")
            )
        else:
            waiter.set_result(reply[0])

    def close(self) -> None:
        self.reusable = False
        self._closed = True
        if self._transport is not None:
            self._transport.close()

    def _finish(self, waiter: asyncio.Future[HttpReply], reply: HttpReply, keep: bool) -> None:
        self._waiter = None
        self._buffer.clear()
        waiter.set_result(reply)
        if keep and not self._closed:
            self.reusable = True
        else:
            self.close()


def _parse(buffer: bytearray, ended: bool) -> tuple[HttpReply, bool, int] | None:
    """The reply in `buffer`, whether its connection may be reused and where the reply ends
    in `buffer`, or None while more bytes are needed (`ended`: none will come, so a body may be
    ended by the close)."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if len(buffer) > _MAX_HEAD or (ended and buffer):
            raise HttpProtocolError(f"reply without a complete header: {bytes(buffer[:80])!r}")
        return None
    lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise HttpProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    status = int(code)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            raise HttpProtocolError(f"malformed header line: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    if 100 <= status < 200:  # an interim reply: the real one follows it
        del buffer[: end + 4]
        return _parse(buffer, ended)
    start = end + 4
    keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunked = _chunked(buffer, start)
        if chunked is None:
            if ended:
                raise HttpProtocolError("connection closed in a chunked reply")
            return None
        body, stop = chunked
    elif "content-length" in headers:
        length = headers["content-length"]
        if not length.isdigit() or int(length) > _MAX_BODY:
            raise HttpProtocolError(f"unusable Content-Length: {length!r}")
        if len(buffer) < start + int(length):
            if ended:
                raise HttpProtocolError("connection closed before the reply's body was whole")
            return None
        stop = start + int(length)
        body = bytes(buffer[start:stop])
    elif status in (204, 304):
        body, stop = b"", start
    else:  # the body ends with the connection
        if len(buffer) - start > _MAX_BODY:
            raise HttpProtocolError(f"reply body over {_MAX_BODY} bytes")
        if not ended:
            return None
        body, keep, stop = bytes(buffer[start:]), False, len(buffer)
    if headers.get("content-encoding", "").lower() == "gzip" and body:
        body = _gunzip(body)
    return HttpReply(status, headers, body), keep, stop


def _chunked(buffer: bytearray, start: int) -> tuple[bytes, int] | None:
    """A chunked body from `start` and where it ends, or None while incomplete (trailers are
    skipped)."""
    parts: list[bytes] = []
    at = start
    while True:
        eol = buffer.find(b"\r\n", at)
        if eol < 0:
            return None
        size_text = bytes(buffer[at:eol]).split(b";", 1)[0].strip()
        if not _HEX.fullmatch(size_text):
            raise HttpProtocolError(f"bad chunk size {size_text[:20]!r}")
        size = int(size_text, 16)
        if size == 0:  # the last chunk, then trailers up to an empty line
            if buffer[eol : eol + 4] == b"\r\n\r\n":
                return b"".join(parts), eol + 4
            trailer_end = buffer.find(b"\r\n\r\n", eol)
            return None if trailer_end < 0 else (b"".join(parts), trailer_end + 4)
        if sum(map(len, parts)) + size > _MAX_BODY:
            raise HttpProtocolError(f"reply body over {_MAX_BODY} bytes")
        if len(buffer) < eol + 2 + size + 2:
            return None
        parts.append(bytes(buffer[eol + 2 : eol + 2 + size]))
        at = eol + 2 + size + 2


def _gunzip(body: bytes) -> bytes:
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, _MAX_BODY)
    except zlib.error as exc:
        raise HttpProtocolError(f"reply body is not valid gzip: {exc}") from None
    if inflater.unconsumed_tail:
        raise HttpProtocolError(f"reply body over {_MAX_BODY} bytes when decompressed")
    return out
